"""Signing in with a second factor: the twoFactorRedirect answer, then verify-totp, -backup-code, -otp."""

import re

import pytest
from django.core import mail
from django.utils import timezone

from authservice import users
from authservice.models import Session, TrustedDevice
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.two_factor_support import code, enrolled, otp_enrolled, start_sign_in  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def test_sign_in_answers_two_factor_redirect_with_the_methods(enrolled):
    response = ApiClient().api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD})
    assert response.json() == {"twoFactorRedirect": True, "twoFactorMethods": ["totp"]}


def test_sign_in_with_2fa_creates_no_session(enrolled):
    before = Session.objects.filter(user=enrolled.user).count()
    client = start_sign_in(enrolled.user.email)
    assert Session.objects.filter(user=enrolled.user).count() == before
    assert client.api_get("/get-session").json() is None


def test_sign_in_sets_the_two_factor_cookie_only(enrolled):
    client = start_sign_in(enrolled.user.email)
    assert "auth.two_factor" in client.cookies
    assert "auth.session_token" not in client.cookies


def test_verify_totp_finishes_the_sign_in_with_token_and_user(enrolled):
    client = start_sign_in(enrolled.user.email)
    response = client.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret)})
    body = response.json()
    assert response.status_code == 200, body
    assert set(body) == {"token", "user"}
    assert body["user"]["twoFactorEnabled"] is True
    assert client.api_get("/get-session").json()["session"]["token"] == body["token"]


def test_a_wrong_totp_code_is_invalid_code(enrolled):
    client = start_sign_in(enrolled.user.email)
    response = client.api_post("/two-factor/verify-totp", {"code": "000000" if code(enrolled.secret) != "000000" else "111111"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_CODE"


def test_the_two_factor_cookie_is_used_once(enrolled):
    client = start_sign_in(enrolled.user.email)
    cookie = client.cookies["auth.two_factor"].value
    client.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret)})
    other = ApiClient()
    other.cookies["auth.two_factor"] = cookie
    response = other.api_post("/two-factor/verify-backup-code", {"code": enrolled.backup_codes[0]})
    assert error_of(response)["code"] == "INVALID_TWO_FACTOR_COOKIE"


def test_verify_without_any_cookie_is_invalid_two_factor_cookie(api, enrolled):
    response = ApiClient().api_post("/two-factor/verify-totp", {"code": "123456"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_TWO_FACTOR_COOKIE"


def test_a_backup_code_finishes_the_sign_in(enrolled):
    client = start_sign_in(enrolled.user.email)
    response = client.api_post("/two-factor/verify-backup-code", {"code": enrolled.backup_codes[0]})
    assert response.status_code == 200, response.content
    assert client.api_get("/get-session").json()["user"]["id"] == str(enrolled.user.pk)


def test_a_wrong_backup_code_is_invalid_backup_code(enrolled):
    client = start_sign_in(enrolled.user.email)
    response = client.api_post("/two-factor/verify-backup-code", {"code": "aaaaa-bbbbb"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_BACKUP_CODE"


def _mailed_code():
    return re.search(r"\b(\d{6})\b", mail.outbox[-1].body).group(1)


def test_an_emailed_code_finishes_the_sign_in(otp_enrolled):
    client = start_sign_in(otp_enrolled.user.email)
    assert client.api_post("/two-factor/send-otp").json() == {"status": True}
    assert mail.outbox[-1].to == [otp_enrolled.user.email]
    response = client.api_post("/two-factor/verify-otp", {"code": _mailed_code()})
    assert response.status_code == 200, response.content
    assert set(response.json()) == {"token", "user"}


def test_an_emailed_code_works_once(otp_enrolled):
    client = start_sign_in(otp_enrolled.user.email)
    client.api_post("/two-factor/send-otp")
    mailed = _mailed_code()
    second = start_sign_in(otp_enrolled.user.email)
    # A code belongs to its own pending sign-in only.
    assert second.api_post("/two-factor/verify-otp", {"code": mailed}).status_code == 400
    assert client.api_post("/two-factor/verify-otp", {"code": mailed}).status_code == 200


def test_verify_otp_before_send_otp_is_otp_has_expired(otp_enrolled):
    client = start_sign_in(otp_enrolled.user.email)
    response = client.api_post("/two-factor/verify-otp", {"code": "123456"})
    assert error_of(response)["code"] == "OTP_HAS_EXPIRED"


def test_an_expired_emailed_code_is_otp_has_expired(otp_enrolled, configure):
    from datetime import timedelta

    from django.utils import timezone

    from authservice.models import TwoFactorChallenge

    client = start_sign_in(otp_enrolled.user.email)
    client.api_post("/two-factor/send-otp")
    TwoFactorChallenge.objects.filter(user=otp_enrolled.user).update(otp_expires_at=timezone.now() - timedelta(seconds=1))
    response = client.api_post("/two-factor/verify-otp", {"code": _mailed_code()})
    assert error_of(response)["code"] == "OTP_HAS_EXPIRED"


def test_an_otp_only_user_is_offered_otp_alone(signed_in):
    signed_in.api_post("/two-factor/enable", {"password": PASSWORD, "method": "otp"})
    response = ApiClient().api_post("/sign-in/email", {"email": signed_in.user.email, "password": PASSWORD})
    assert response.json() == {"twoFactorRedirect": True, "twoFactorMethods": ["otp"]}


def test_a_totp_user_is_not_sent_emailed_codes(enrolled):
    # Their mailbox resets the password: it must not also be their second factor.
    client = start_sign_in(enrolled.user.email)
    mail.outbox.clear()
    response = client.api_post("/two-factor/send-otp")
    assert error_of(response)["code"] == "OTP_NOT_ENABLED"
    assert mail.outbox == []


def test_a_totp_user_cannot_finish_the_sign_in_with_an_emailed_code(enrolled):
    client = start_sign_in(enrolled.user.email)
    response = client.api_post("/two-factor/verify-otp", {"code": "123456"})
    assert error_of(response)["code"] == "OTP_NOT_ENABLED"
    assert client.api_get("/get-session").json() is None


def test_trust_device_sets_a_cookie_that_skips_the_next_sign_in(enrolled):
    client = start_sign_in(enrolled.user.email)
    client.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret), "trustDevice": True})
    client.api_post("/sign-out")
    response = client.api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD})
    assert response.json()["token"]


def test_a_trusted_device_is_rotated_on_use(enrolled):
    client = start_sign_in(enrolled.user.email)
    client.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret), "trustDevice": True})
    first = TrustedDevice.objects.get(user=enrolled.user).pk
    old_cookie = client.cookies["auth.trust_device"].value
    client.api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD})
    assert list(TrustedDevice.objects.filter(user=enrolled.user).values_list("pk", flat=True)) != [first]
    replay = ApiClient()
    replay.cookies["auth.trust_device"] = old_cookie
    answer = replay.api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD}).json()
    assert answer.get("twoFactorRedirect") is True


def test_trusted_devices_are_listed_and_revocable(enrolled):
    client = start_sign_in(enrolled.user.email)
    client.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret), "trustDevice": True})
    listed = client.api_get("/two-factor/trusted-devices").json()
    assert len(listed) == 1 and listed[0]["id"].startswith("trust-device-")
    revoked = client.api_post("/two-factor/revoke-trusted-device", {"id": listed[0]["id"]})
    assert revoked.json() == {"status": True}
    assert client.api_get("/two-factor/trusted-devices").json() == []


def test_revoking_another_users_device_is_not_found(enrolled, make_user):
    client = start_sign_in(enrolled.user.email)
    client.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret), "trustDevice": True})
    device = TrustedDevice.objects.get(user=enrolled.user).pk
    other = ApiClient()
    make_user(email="bob@example.com")
    other.api_post("/sign-in/email", {"email": "bob@example.com", "password": PASSWORD})
    response = other.api_post("/two-factor/revoke-trusted-device", {"id": device})
    assert response.status_code == 404
    assert TrustedDevice.objects.filter(pk=device).exists()


def test_disabling_2fa_revokes_every_trusted_device(enrolled):
    client = start_sign_in(enrolled.user.email)
    client.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret), "trustDevice": True})
    enrolled.api_post("/two-factor/disable", {"password": PASSWORD})
    assert not TrustedDevice.objects.filter(user=enrolled.user).exists()


def test_a_password_change_revokes_every_trusted_device(enrolled):
    client = start_sign_in(enrolled.user.email)
    client.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret), "trustDevice": True})
    changed = client.api_post("/change-password", {"currentPassword": PASSWORD, "newPassword": "another good one"})
    assert changed.status_code == 200, changed.content
    assert not TrustedDevice.objects.filter(user=enrolled.user).exists()


def test_a_password_reset_keeps_2fa_and_the_next_sign_in_still_asks(enrolled):
    # Of a proven address: the reset of an unproven one is its first proof, which retires the factor set
    # up before it with the password (tests/security/test_prehijack_second_factor.py).
    users.update(enrolled.user, email_verified=True, email_verified_at=timezone.now())
    enrolled.api_post("/request-password-reset", {"email": enrolled.user.email})
    token = re.search(r"Reset code: (\S+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_post("/reset-password", {"token": token, "newPassword": "brand new pass"}).status_code == 200
    answer = ApiClient().api_post("/sign-in/email", {"email": enrolled.user.email, "password": "brand new pass"})
    assert answer.json()["twoFactorRedirect"] is True


def test_sign_in_verified_sends_two_factor_verified(enrolled):
    from authservice import signals

    seen = []

    def on_verified(sender, user, method, session, **kwargs):
        seen.append((method, session is not None))

    signals.two_factor_verified.connect(on_verified)
    try:
        client = start_sign_in(enrolled.user.email)
        client.api_post("/two-factor/verify-backup-code", {"code": enrolled.backup_codes[1]})
    finally:
        signals.two_factor_verified.disconnect(on_verified)
    assert seen == [("backup_code", True)]


@pytest.mark.parametrize("otp_on", [True, False])
@pytest.mark.parametrize("factor", [None, "unconfirmed", "confirmed"])
def test_the_methods_offered_match_the_rule_for_mailed_codes(make_user, configure, otp_on, factor):
    # methods_of answers in one query; otp.offered_to is the rule every OTP endpoint enforces.
    from authservice.models import TwoFactor
    from authservice.two_factor import challenge, otp

    configure(two_factor={"otp": {"enabled": otp_on}})
    user = make_user()
    if factor:
        TwoFactor.objects.create(user=user, secret="x", verified=factor == "confirmed")
    assert ("otp" in challenge.methods_of(user)) == otp.offered_to(user)
    assert ("totp" in challenge.methods_of(user)) == (factor == "confirmed")


def test_an_emailed_code_for_a_sign_in_ended_meanwhile_is_otp_has_expired(otp_enrolled, monkeypatch):
    """The challenge read by the verify is deleted before its code is compared (2FA disabled or the
    password changed in a request that won the user's lock): a 400, not a 500 (attack pass 17e)."""
    from authservice.models import TwoFactorChallenge
    from authservice.two_factor import otp

    client = start_sign_in(otp_enrolled.user.email)
    client.api_post("/two-factor/send-otp")
    sessions = Session.objects.filter(user=otp_enrolled.user).count()
    offered = otp._require_offered

    def ended_meanwhile(user):
        offered(user)
        TwoFactorChallenge.objects.filter(user=user).delete()

    monkeypatch.setattr(otp, "_require_offered", ended_meanwhile)
    response = client.api_post("/two-factor/verify-otp", {"code": _mailed_code()})
    assert response.status_code == 400 and error_of(response)["code"] == "OTP_HAS_EXPIRED"
    assert Session.objects.filter(user=otp_enrolled.user).count() == sessions
