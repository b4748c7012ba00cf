"""Attack 17b: attacks on the second factor that held. Kept as regressions (they pass).

The attacker holds the victim's password, or a cookie of their own account, and sends any bytes.
"""

import json
import re

import pytest
from django.core import mail
from django.core.management import call_command

from tests.conftest import PASSWORD, ApiClient, error_of
from tests.two_factor_support import code, enrol, enrolled, start_sign_in  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def _post_raw(client, path, raw_body):
    return client.generic("POST", "/api/auth" + path, raw_body, content_type="application/json",
                          HTTP_ORIGIN=client.origin)


@pytest.mark.parametrize("digits", [ARABIC_INDIC, FULLWIDTH], ids=["arabic-indic", "fullwidth"])
def test_the_right_totp_code_in_other_unicode_digits_is_an_invalid_code_not_a_500(enrolled, digits):
    # str.isdigit() and int() accept these; the comparison must stay on the ASCII code.
    response = start_sign_in(enrolled.user.email).api_post(
        "/two-factor/verify-totp", {"code": code(enrolled.secret, 1).translate(digits)})
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_CODE"


@pytest.mark.parametrize("path", ["/two-factor/verify-totp", "/two-factor/verify-otp",
                                  "/two-factor/verify-backup-code"])
def test_a_lone_surrogate_in_a_code_is_a_400_not_a_500(enrolled, path):
    # json.loads accepts "\ud800"; encoding it for a hash would raise.
    response = _post_raw(start_sign_in(enrolled.user.email), path, '{"code": "12345\\ud800"}')
    assert response.status_code == 400
    error_of(response)


@pytest.mark.parametrize("value", [["123456"], 123456, None, {"code": "123456"}, True],
                         ids=["array", "number", "null", "object", "boolean"])
def test_a_code_that_is_not_a_string_is_a_400(enrolled, value):
    response = start_sign_in(enrolled.user.email).api_post("/two-factor/verify-backup-code", {"code": value})
    assert response.status_code == 400
    error_of(response)


def test_update_user_cannot_turn_two_factor_off(enrolled):
    enrolled.api_post("/update-user", {"twoFactorEnabled": False})
    answer = ApiClient().api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD})
    assert answer.json().get("twoFactorRedirect") is True


def test_a_trusted_device_cookie_in_the_two_factor_cookies_place_is_no_pending_sign_in(enrolled):
    owner = start_sign_in(enrolled.user.email)
    assert owner.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret, 1),
                                                      "trustDevice": True}).status_code == 200
    attacker = ApiClient()
    attacker.cookies["auth.two_factor"] = owner.cookies["auth.trust_device"].value
    response = attacker.api_post("/two-factor/verify-backup-code", {"code": enrolled.backup_codes[0]})
    assert error_of(response)["code"] == "INVALID_TWO_FACTOR_COOKIE"


def test_the_attackers_own_pending_sign_in_does_not_take_the_victims_backup_code(enrolled, make_user):
    make_user(email="mallory@example.com")
    mallory = ApiClient()
    mallory.api_post("/sign-in/email", {"email": "mallory@example.com", "password": PASSWORD})
    enrol(mallory)
    pending = start_sign_in("mallory@example.com")
    response = pending.api_post("/two-factor/verify-backup-code", {"code": enrolled.backup_codes[0]})
    assert error_of(response)["code"] == "INVALID_BACKUP_CODE"
    victim = start_sign_in(enrolled.user.email)
    assert victim.api_post("/two-factor/verify-backup-code", {"code": enrolled.backup_codes[0]}).status_code == 200


def test_a_pending_sign_in_started_with_the_old_password_dies_with_a_password_reset(enrolled):
    attacker = start_sign_in(enrolled.user.email)
    ApiClient().api_post("/request-password-reset", {"email": enrolled.user.email})
    token = re.search(r"Reset code: (\S+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_post("/reset-password", {"token": token, "newPassword": "brand new pass"}).status_code == 200
    response = attacker.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret, 1)})
    assert error_of(response)["code"] == "INVALID_TWO_FACTOR_COOKIE"


def test_a_trusted_device_stops_skipping_after_an_operators_mfa_reset_and_re_enrolment(enrolled):
    owner = start_sign_in(enrolled.user.email)
    owner.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret, 1), "trustDevice": True})
    call_command("mfa_reset", enrolled.user.email)
    enrol(enrolled)
    answer = owner.api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD})
    assert answer.json().get("twoFactorRedirect") is True


def test_a_locked_account_refuses_backup_codes_too(enrolled):
    # The lock covers every method of a pending sign-in, so it cannot be sidestepped by switching.
    for _ in range(2):
        attacker = start_sign_in(enrolled.user.email)
        for _ in range(5):
            attacker.api_post("/two-factor/verify-backup-code", {"code": "aaaaa-bbbbb"})
    response = start_sign_in(enrolled.user.email).api_post(
        "/two-factor/verify-backup-code", {"code": enrolled.backup_codes[0]})
    assert error_of(response)["code"] == "ACCOUNT_TEMPORARILY_LOCKED"


def test_the_sign_in_answer_of_a_user_with_2fa_carries_no_token_with_bearer_on(enrolled, configure):
    configure(bearer={"enabled": True})
    response = ApiClient().api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD})
    assert response.json() == {"twoFactorRedirect": True, "twoFactorMethods": ["totp"]}
    assert "set-auth-token" not in response.headers
    assert json.dumps(response.json()).count("token") == 0
