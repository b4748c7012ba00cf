"""Turning two-factor authentication on and off (better-auth's /two-factor/enable, verify-totp, disable)."""

import pytest

from authservice import signals
from authservice.models import BackupCode, TwoFactor
from tests.conftest import PASSWORD, error_of
from tests.two_factor_support import code, enrolled, secret_of  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def test_enable_answers_a_totp_uri_and_ten_backup_codes(signed_in):
    body = signed_in.api_post("/two-factor/enable", {"password": PASSWORD}).json()
    assert body["method"] == "totp"
    assert body["totpURI"].startswith("otpauth://totp/")
    assert len(body["backupCodes"]) == 10
    assert all(len(c) == 11 and c[5] == "-" for c in body["backupCodes"])


def test_enable_needs_the_password(signed_in):
    response = signed_in.api_post("/two-factor/enable", {"password": "wrong password"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_PASSWORD"


def test_enable_needs_a_session(api, user):
    assert api.api_post("/two-factor/enable", {"password": PASSWORD}).status_code == 401


def test_totp_is_not_active_until_a_first_valid_code(signed_in):
    signed_in.api_post("/two-factor/enable", {"password": PASSWORD})
    session = signed_in.api_get("/get-session").json()
    assert session["user"]["twoFactorEnabled"] is False


def test_a_first_valid_code_turns_totp_on(enrolled):
    assert enrolled.api_get("/get-session").json()["user"]["twoFactorEnabled"] is True
    assert TwoFactor.objects.get(user=enrolled.user).verified is True


def test_skip_verification_on_enable_turns_it_on_at_once(signed_in, configure):
    configure(two_factor={"skip_verification_on_enable": True})
    signed_in.api_post("/two-factor/enable", {"password": PASSWORD})
    assert signed_in.api_get("/get-session").json()["user"]["twoFactorEnabled"] is True


def test_enable_twice_is_totp_already_enabled(enrolled):
    response = enrolled.api_post("/two-factor/enable", {"password": PASSWORD})
    assert error_of(response)["code"] == "TOTP_ALREADY_ENABLED"


def test_an_unknown_method_is_a_validation_error(signed_in):
    response = signed_in.api_post("/two-factor/enable", {"password": PASSWORD, "method": "sms"})
    assert response.status_code == 400


def test_enable_with_method_otp_turns_email_codes_on(signed_in):
    body = signed_in.api_post("/two-factor/enable", {"password": PASSWORD, "method": "otp"}).json()
    assert body == {"method": "otp"}
    assert signed_in.api_get("/get-session").json()["user"]["twoFactorEnabled"] is True


def test_the_secret_is_encrypted_at_rest(enrolled):
    stored = TwoFactor.objects.get(user=enrolled.user).secret
    assert enrolled.secret not in stored


def test_backup_codes_are_stored_hashed(enrolled):
    stored = set(BackupCode.objects.filter(user=enrolled.user).values_list("code_hash", flat=True))
    assert len(stored) == 10
    assert not stored & set(enrolled.backup_codes)


def test_get_totp_uri_gives_the_same_secret_with_the_password(enrolled):
    body = enrolled.api_post("/two-factor/get-totp-uri", {"password": PASSWORD}).json()
    assert secret_of(body["totpURI"]) == enrolled.secret


def test_get_totp_uri_refuses_a_wrong_password(enrolled):
    response = enrolled.api_post("/two-factor/get-totp-uri", {"password": "nope nope"})
    assert error_of(response)["code"] == "INVALID_PASSWORD"


def test_generate_backup_codes_replaces_the_old_ones(enrolled):
    body = enrolled.api_post("/two-factor/generate-backup-codes", {"password": PASSWORD}).json()
    assert body["status"] is True
    assert not set(body["backupCodes"]) & set(enrolled.backup_codes)
    assert BackupCode.objects.filter(user=enrolled.user).count() == 10


def test_generate_backup_codes_without_2fa_is_two_factor_not_enabled(signed_in):
    response = signed_in.api_post("/two-factor/generate-backup-codes", {"password": PASSWORD})
    assert error_of(response)["code"] == "TWO_FACTOR_NOT_ENABLED"


def test_disable_turns_it_off_and_deletes_the_factor(enrolled):
    assert enrolled.api_post("/two-factor/disable", {"password": PASSWORD}).json() == {"status": True}
    assert enrolled.api_get("/get-session").json()["user"]["twoFactorEnabled"] is False
    assert not TwoFactor.objects.filter(user=enrolled.user).exists()
    assert not BackupCode.objects.filter(user=enrolled.user).exists()


def test_disable_needs_a_fresh_session(enrolled, configure):
    from datetime import timedelta

    from django.utils import timezone

    from authservice.models import Session

    Session.objects.filter(user=enrolled.user).update(created_at=timezone.now() - timedelta(days=2))
    response = enrolled.api_post("/two-factor/disable", {"password": PASSWORD})
    assert error_of(response)["code"] == "SESSION_NOT_FRESH"


def _made_two_days_ago(client):
    from datetime import timedelta

    from django.utils import timezone

    from authservice.models import Session

    Session.objects.filter(user=client.user).update(created_at=timezone.now() - timedelta(days=2))
    return client


def test_enable_with_a_factor_in_place_needs_a_fresh_session(signed_in):
    signed_in.api_post("/two-factor/enable", {"password": PASSWORD, "method": "otp"})
    response = _made_two_days_ago(signed_in).api_post("/two-factor/enable", {"password": PASSWORD})
    assert error_of(response)["code"] == "SESSION_NOT_FRESH"


def test_a_first_enable_works_from_any_session(signed_in):
    response = _made_two_days_ago(signed_in).api_post("/two-factor/enable", {"password": PASSWORD})
    assert response.status_code == 200


def test_enabling_and_disabling_send_their_signals(signed_in):
    seen = []

    def on_enabled(sender, user, method, **kwargs):
        seen.append(("enabled", method))

    def on_disabled(sender, user, **kwargs):
        seen.append(("disabled", None))

    signals.two_factor_enabled.connect(on_enabled)
    signals.two_factor_disabled.connect(on_disabled)
    try:
        from tests.two_factor_support import enrol

        enrol(signed_in)
        signed_in.api_post("/two-factor/disable", {"password": PASSWORD})
    finally:
        signals.two_factor_enabled.disconnect(on_enabled)
        signals.two_factor_disabled.disconnect(on_disabled)
    assert seen == [("enabled", "totp"), ("disabled", None)]


def test_without_the_setting_there_are_no_routes_and_no_user_field(signed_in, configure):
    configure(two_factor={"enabled": False})
    assert signed_in.api_post("/two-factor/enable", {"password": PASSWORD}).status_code == 404
    assert "twoFactorEnabled" not in signed_in.api_get("/get-session").json()["user"]
