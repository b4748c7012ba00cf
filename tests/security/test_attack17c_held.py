"""Attack 17c: attacks on the second factor that held. Kept as regressions (they pass).

The attacker holds the victim's password, or a session of their own, and sends any bytes.
"""

import re

import pytest
from django.core import mail

from tests.conftest import PASSWORD, ApiClient, error_of
from tests.two_factor_support import enrolled, otp_enrolled, start_sign_in  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

HOSTILE_COOKIES = ["\x00", "a" * 5000, "%00.%00", "x.y.z", "..", "%ff%fe", "trust-device-x!y"]


def _post_raw(client, path, raw_body):
    return client.generic("POST", "/api/auth" + path, raw_body, content_type="application/json",
                          HTTP_ORIGIN=client.origin)


@pytest.mark.parametrize("value", HOSTILE_COOKIES)
def test_a_hostile_two_factor_cookie_is_no_pending_sign_in_and_no_500(enrolled, value):
    client = ApiClient()
    client.cookies["auth.two_factor"] = value
    response = client.api_post("/two-factor/verify-totp", {"code": "123456"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_TWO_FACTOR_COOKIE"


@pytest.mark.parametrize("value", HOSTILE_COOKIES)
def test_a_hostile_trust_device_cookie_skips_nothing_and_is_no_500(enrolled, value):
    client = ApiClient()
    client.cookies["auth.trust_device"] = value
    answer = client.api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD})
    assert answer.status_code == 200
    assert answer.json().get("twoFactorRedirect") is True


@pytest.mark.parametrize("raw", ['{"password": "%s", "issuer": "a\\u0000b"}' % PASSWORD,
                                 '{"password": "%s", "issuer": "a\\ud800"}' % PASSWORD,
                                 '{"password": "%s", "method": ["otp"]}' % PASSWORD],
                         ids=["nul-issuer", "surrogate-issuer", "array-method"])
def test_hostile_enable_bodies_are_a_400(signed_in, raw):
    response = _post_raw(signed_in, "/two-factor/enable", raw)
    assert response.status_code == 400
    error_of(response)


def test_a_code_mailed_for_a_signed_in_check_does_not_finish_a_pending_sign_in(otp_enrolled):
    # The thief holds the password and their own view of nothing else; the owner's session asks for a
    # code (the session's own challenge row). That code must not serve another (pending) challenge.
    mail.outbox.clear()
    assert otp_enrolled.api_post("/two-factor/send-otp").status_code == 200
    mailed = re.search(r"\b(\d{6})\b", mail.outbox[-1].body).group(1)
    thief = start_sign_in(otp_enrolled.user.email)
    response = thief.api_post("/two-factor/verify-otp", {"code": mailed})
    assert response.status_code == 400
    assert error_of(response)["code"] == "OTP_HAS_EXPIRED"
    assert thief.api_get("/get-session").json() is None


def test_a_signed_in_users_totp_check_takes_the_step_from_a_pending_sign_in(enrolled):
    # One TOTP code, two uses: the owner's signed-in check and a thief's pending sign-in (the code
    # shoulder-surfed). Only the first use counts, whichever path it took.
    from tests.two_factor_support import code

    now = code(enrolled.secret)
    assert enrolled.api_post("/two-factor/verify-totp", {"code": now}).status_code == 200
    thief = start_sign_in(enrolled.user.email)
    response = thief.api_post("/two-factor/verify-totp", {"code": now})
    assert response.status_code == 401
    assert thief.api_get("/get-session").json() is None
