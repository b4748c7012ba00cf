"""Attack 17: the pending sign-in's two_factor cookie (someone who knows the password, not the code)
opens nothing but the second-factor endpoints."""

import pytest

from tests.conftest import PASSWORD, ApiClient
from tests.two_factor_support import enrolled, start_sign_in  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/get-session", None),
    ("GET", "/list-sessions", None),
    ("GET", "/list-accounts", None),
    ("GET", "/two-factor/trusted-devices", None),
    ("POST", "/update-user", {"name": "Mallory"}),
    ("POST", "/change-password", {"currentPassword": PASSWORD, "newPassword": "mallory's own"}),
    ("POST", "/change-email", {"newEmail": "mallory@example.com"}),
    ("POST", "/delete-user", {"password": PASSWORD}),
    ("POST", "/revoke-other-sessions", {}),
    ("POST", "/two-factor/disable", {"password": PASSWORD}),
    ("POST", "/two-factor/enable", {"password": PASSWORD}),
    ("POST", "/two-factor/get-totp-uri", {"password": PASSWORD}),
    ("POST", "/two-factor/generate-backup-codes", {"password": PASSWORD}),
])
def test_the_two_factor_cookie_is_no_session_anywhere(enrolled, method, path, body):
    attacker = start_sign_in(enrolled.user.email)
    if method == "GET":
        response = attacker.api_get(path)
        assert response.status_code in (200, 401), response.content
        if response.status_code == 200:
            assert response.json() in (None, []), response.content
    else:
        response = attacker.api_post(path, body)
        assert response.status_code == 401, response.content
    assert enrolled.api_get("/get-session").json()["user"]["twoFactorEnabled"] is True


def test_the_two_factor_cookie_value_as_a_session_cookie_is_nothing(enrolled):
    attacker = start_sign_in(enrolled.user.email)
    forged = ApiClient()
    forged.cookies["auth.session_token"] = attacker.cookies["auth.two_factor"].value
    assert forged.api_get("/get-session").json() is None


def test_a_trusted_device_cookie_of_user_a_does_not_skip_user_bs_second_factor(enrolled, make_user):
    from tests.two_factor_support import code, enrol

    a_browser = start_sign_in(enrolled.user.email)
    a_browser.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret), "trustDevice": True})
    bob = make_user(email="bob@example.com")
    bob_client = ApiClient()
    bob_client.api_post("/sign-in/email", {"email": bob.email, "password": PASSWORD})
    enrol(bob_client)

    attacker = ApiClient()
    attacker.cookies["auth.trust_device"] = a_browser.cookies["auth.trust_device"].value
    answer = attacker.api_post("/sign-in/email", {"email": bob.email, "password": PASSWORD}).json()
    assert answer == {"twoFactorRedirect": True, "twoFactorMethods": ["totp"]}
    assert attacker.api_get("/get-session").json() is None
