"""Attack 17b, passkey attacks that held: kept as regressions.

Cookie swapping (our signed cookies are not bound to their names, as better-auth's: a validly signed
value of one cookie put in another must open nothing), a truncated or re-signed challenge cookie, a
deleted passkey, a ceremony finished in a browser now signed in as someone else.
"""

import json

import pytest

from authservice.models import Passkey, Session
from tests.conftest import ApiClient, error_of
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, sign_in
from tests.security.passkey_fixtures import attacker, victim  # noqa: F401 - fixtures

PASSKEY = "auth.better-auth-passkey"
SESSION = "auth.session_token"
TWO_FACTOR = "auth.two_factor"


def _verify(client, assertion):
    return client.api_post("/passkey/verify-authentication", {"response": assertion})


@pytest.mark.parametrize("mangle", [
    lambda value: value[:-1],                                   # truncated signature
    lambda value: value.split(".")[0],                          # signature dropped
    lambda value: value.split(".")[0][::-1] + "." + value.split(".", 1)[1],  # id re-ordered, same signature
    lambda value: value + "." + value.rsplit(".", 1)[1],          # signature appended twice
])
def test_a_mangled_challenge_cookie_finds_no_challenge(victim, mangle):  # noqa: F811
    _, authenticator, _ = victim
    browser = ApiClient()
    options = browser.api_get("/passkey/generate-authenticate-options").json()
    browser.cookies[PASSKEY] = mangle(browser.cookies[PASSKEY].value.replace("%3D", "="))
    response = _verify(browser, authenticator.get(options))
    assert response.status_code == 400 and error_of(response)["code"] == "CHALLENGE_NOT_FOUND"


def test_a_session_cookie_value_in_the_challenge_cookie_finds_no_challenge(victim):  # noqa: F811
    client, authenticator, _ = victim
    options = ApiClient().api_get("/passkey/generate-authenticate-options").json()
    client.cookies[PASSKEY] = client.cookies[SESSION].value
    response = _verify(client, authenticator.get(options))
    assert response.status_code == 400 and error_of(response)["code"] == "CHALLENGE_NOT_FOUND"


@pytest.mark.parametrize("target", [SESSION, TWO_FACTOR])
def test_a_challenge_cookie_value_in_another_cookie_opens_nothing(victim, target):  # noqa: F811
    browser = ApiClient()
    browser.api_get("/passkey/generate-authenticate-options")
    browser.cookies[target] = browser.cookies[PASSKEY].value
    assert browser.api_get("/get-session").json() is None
    assert browser.api_post("/two-factor/verify-totp", {"code": "000000"}).status_code == 401


def test_a_deleted_passkey_signs_nobody_in(victim):  # noqa: F811
    client, authenticator, passkey = victim
    assert client.api_post("/passkey/delete-passkey", {"id": passkey["id"]}).status_code == 200
    response = sign_in(ApiClient(), authenticator)
    assert response.status_code == 401 and error_of(response)["code"] == "PASSKEY_NOT_FOUND"


def test_a_victims_challenge_cookie_planted_in_the_attackers_browser_registers_nothing(victim, attacker):  # noqa: F811
    """Cookie swapping between users: the registration challenge names the account it was issued to."""
    client, _, _ = victim
    options = client.api_get("/passkey/generate-register-options").json()
    attacker.cookies[PASSKEY] = client.cookies[PASSKEY].value
    key = SoftAuthenticator(RP_ID, ORIGIN)
    response = attacker.api_post("/passkey/verify-registration", {"response": key.create(options)})
    assert response.status_code == 401
    assert error_of(response)["code"] == "YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY"


def test_a_passkey_sign_in_refuses_a_deactivated_user(victim):  # noqa: F811
    client, authenticator, _ = victim
    user = client.user
    user.is_active = False
    user.save()
    sessions_before = Session.objects.filter(user=user).count()
    response = sign_in(ApiClient(), authenticator)
    assert response.status_code == 401
    assert Session.objects.filter(user=user).count() <= sessions_before


def test_a_fresh_guard_keeps_a_stale_stolen_cookie_from_adding_a_passkey(victim, configure):  # noqa: F811
    client, _, _ = victim
    configure(session={"fresh_age": 1})
    Session.objects.filter(user=client.user).update(
        created_at=Session.objects.filter(user=client.user).first().created_at.replace(year=2000))
    response = client.api_get("/passkey/generate-register-options")
    assert response.status_code == 403 and error_of(response)["code"] == "SESSION_NOT_FRESH"


@pytest.mark.parametrize("content_type, origin", [
    ("text/plain", "https://evil.example"),                # a cross-site form's simple request
    ("application/x-www-form-urlencoded", "null"),         # a sandboxed frame's form
    ("application/json", "https://evil.example"),          # a CORS request the browser sends anyway
])
def test_a_malicious_page_cannot_delete_the_victims_passkey(victim, content_type, origin):  # noqa: F811
    client, _, passkey = victim
    client.origin = None
    response = client.generic("POST", "/api/auth/passkey/delete-passkey", json.dumps({"id": passkey["id"]}),
                              content_type=content_type, HTTP_ORIGIN=origin)
    assert response.status_code in (403, 415), response.content
    assert Passkey.objects.filter(pk=passkey["id"]).exists()
