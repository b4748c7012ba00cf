"""Attack 17, passkey challenges: a ceremony's challenge is used once, before it expires, by the browser that
asked for it (I9). The attacker replays a challenge or an assertion it observed, or finishes a sign-in with
a challenge its own browser never asked for (login CSRF's WebAuthn form)."""

from datetime import timedelta

from django.utils import timezone

from authservice.models import Session, Verification
from tests.conftest import ApiClient, error_of
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, register
from tests.security.passkey_fixtures import attacker, victim  # noqa: F401 - fixtures

COOKIE = "auth.better-auth-passkey"


def _verify(client, response):
    return client.api_post("/passkey/verify-authentication", {"response": response})


def test_a_used_sign_in_challenge_cannot_be_used_again(victim):  # noqa: F811
    _, authenticator, _ = victim
    browser = ApiClient()
    options = browser.api_get("/passkey/generate-authenticate-options").json()
    cookie = browser.cookies[COOKIE].value
    assert _verify(browser, authenticator.get(options)).status_code == 200
    browser.cookies[COOKIE] = cookie  # the cookie as it was before the first answer cleared it
    replay = _verify(browser, authenticator.get(options))  # a fresh signature, counter raised
    assert replay.status_code == 400 and error_of(replay)["code"] == "CHALLENGE_NOT_FOUND"


def test_a_replayed_assertion_opens_no_second_session(victim):  # noqa: F811
    client, authenticator, _ = victim
    browser = ApiClient()
    options = browser.api_get("/passkey/generate-authenticate-options").json()
    assertion = authenticator.get(options)
    assert _verify(browser, assertion).status_code == 200
    sessions_before = Session.objects.count()
    thief = ApiClient()
    thief.api_get("/passkey/generate-authenticate-options")  # a live challenge of its own
    replay = _verify(thief, assertion)
    assert replay.status_code == 400 and error_of(replay)["code"] == "AUTHENTICATION_FAILED"
    assert Session.objects.count() == sessions_before


def test_a_challenge_asked_by_another_browser_is_not_found(victim):  # noqa: F811
    _, authenticator, _ = victim
    asking = ApiClient()
    options = asking.api_get("/passkey/generate-authenticate-options").json()
    other = ApiClient()  # no challenge cookie: it never asked
    response = _verify(other, authenticator.get(options))
    assert response.status_code == 400 and error_of(response)["code"] == "CHALLENGE_NOT_FOUND"


def test_an_unsigned_challenge_cookie_is_not_accepted(victim):  # noqa: F811
    _, authenticator, _ = victim
    asking = ApiClient()
    options = asking.api_get("/passkey/generate-authenticate-options").json()
    row = Verification.objects.get(identifier__startswith="passkey-challenge:")
    forger = ApiClient()
    forger.cookies[COOKIE] = row.identifier.split(":", 1)[1]  # the right id, without the signature
    response = _verify(forger, authenticator.get(options))
    assert response.status_code == 400 and error_of(response)["code"] == "CHALLENGE_NOT_FOUND"


def test_an_expired_challenge_is_not_found(victim):  # noqa: F811
    _, authenticator, _ = victim
    browser = ApiClient()
    options = browser.api_get("/passkey/generate-authenticate-options").json()
    Verification.objects.filter(identifier__startswith="passkey-challenge:").update(
        expires_at=timezone.now() - timedelta(seconds=1))
    response = _verify(browser, authenticator.get(options))
    assert response.status_code == 400 and error_of(response)["code"] == "CHALLENGE_NOT_FOUND"


def test_a_registration_challenge_cannot_finish_a_sign_in(victim):  # noqa: F811
    client, authenticator, _ = victim
    options = client.api_get("/passkey/generate-register-options").json()
    response = _verify(client, authenticator.get(options))
    assert response.status_code == 400 and error_of(response)["code"] == "CHALLENGE_NOT_FOUND"


def test_a_registration_challenge_of_one_account_cannot_register_for_another(victim, attacker):  # noqa: F811
    """The attacker plants its challenge cookie in the victim's browser: the passkey would land on the
    attacker's account, or the victim's on the attacker's challenge."""
    client, _, _ = victim
    options = attacker.api_get("/passkey/generate-register-options").json()
    client.cookies[COOKIE] = attacker.cookies[COOKIE].value
    response = client.api_post("/passkey/verify-registration",
                               {"response": SoftAuthenticator(RP_ID, ORIGIN).create(options)})
    assert response.status_code == 401
    assert error_of(response)["code"] == "YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY"


def test_a_registration_challenge_is_used_once(victim):  # noqa: F811
    client, _, _ = victim
    response = register(client, SoftAuthenticator(RP_ID, ORIGIN))
    assert response.status_code == 200  # the honest path works
    stale = client.api_post("/passkey/verify-registration",
                            {"response": SoftAuthenticator(RP_ID, ORIGIN).create({"challenge": "AAAA",
                                                                                  "user": {"id": "x"}})})
    assert error_of(stale)["code"] == "CHALLENGE_NOT_FOUND"
