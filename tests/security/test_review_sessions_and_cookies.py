"""I1: a session cookie is worth only the session it names, and only its owner can end or see it.

The attacker (an ordinary account) tries: a victim's token with the attacker's signature, no signature,
a truncated/extended signature, percent-encoding and case tricks on the signature, the unsigned token in
``Authorization: Bearer``, a cookie without the expected name (or a ``__Secure-`` name on http), a
duplicated cookie name, the ``dont_remember`` cookie's signed ``true`` reused as a session token,
revoke-session with the victim's token, and whether list-sessions or get-session of the attacker ever
shows the victim's session. A deactivated user's live session must stop working at once.
"""

from urllib.parse import quote, unquote

import pytest
from django.contrib.auth import get_user_model

from authservice import tokens
from authservice.models import Session
from tests.conftest import ApiClient, PASSWORD

pytestmark = pytest.mark.django_db


def _sign_in(email, remember=True):
    client = ApiClient()
    response = client.api_post("/sign-in/email", {"email": email, "password": PASSWORD, "rememberMe": remember})
    assert response.status_code == 200, response.content
    return client, response.json()["token"]


@pytest.fixture
def pair(make_user):
    make_user(email="victim@example.com")
    make_user(email="mallory@example.com")
    victim, victim_token = _sign_in("victim@example.com")
    mallory, mallory_token = _sign_in("mallory@example.com")
    return victim, victim_token, mallory, mallory_token


def _session_with(cookie_value=None, **headers):
    client = ApiClient()
    if cookie_value is not None:
        client.cookies["auth.session_token"] = cookie_value
    return client.api_get("/get-session", **headers).json()


def test_forged_cookie_values_give_no_session(pair):
    _, victim_token, mallory, mallory_token = pair
    mallory_cookie = unquote(mallory.cookies["auth.session_token"].value)
    mallory_sig = mallory_cookie.rpartition(".")[2]
    good_sig = tokens.hmac_signature(victim_token)
    forged = [
        victim_token, f"{victim_token}.", f"{victim_token}.{mallory_sig}", f"{victim_token}.{good_sig[:-1]}",
        f"{victim_token}.{good_sig.lower()}", f"{victim_token}.{good_sig}x", f"{victim_token}.{good_sig[:43]}A",
        f"{victim_token}%2E{quote(mallory_sig, safe='')}", f"{victim_token}.{mallory_token}.{mallory_sig}",
        f" {victim_token}.{mallory_sig}",
    ]
    for value in forged:
        assert _session_with(value) is None, value


def test_bearer_token_is_not_a_session(pair):
    _, victim_token, _, _ = pair
    assert _session_with(HTTP_AUTHORIZATION=f"Bearer {victim_token}") is None


def test_dont_remember_value_is_not_a_session_token(pair, make_user):
    make_user(email="short@example.com")
    client, _ = _sign_in("short@example.com", remember=False)
    dont_remember = client.cookies["auth.dont_remember"].value
    assert _session_with(dont_remember) is None


def test_secure_prefixed_or_renamed_cookie_is_ignored_on_http(pair):
    victim, _, _, _ = pair
    value = victim.cookies["auth.session_token"].value
    client = ApiClient()
    client.cookies["__Secure-auth.session_token"] = value
    client.cookies["auth.Session_Token"] = value
    assert client.api_get("/get-session").json() is None


def test_revoke_session_with_victims_token_does_nothing(pair):
    victim, victim_token, mallory, _ = pair
    assert mallory.api_post("/revoke-session", {"token": victim_token}).status_code == 200
    assert Session.objects.filter(token=victim_token).exists()
    assert victim.api_get("/get-session").json()["user"]["email"] == "victim@example.com"


def test_list_sessions_shows_only_the_callers(pair):
    _, victim_token, mallory, _ = pair
    listed = mallory.api_get("/list-sessions").json()
    assert listed and all(item["token"] != victim_token for item in listed)
    assert {item["userId"] for item in listed} == {get_user_model().objects.get(email="mallory@example.com").pk}


def test_deactivated_users_live_session_stops_at_once(pair):
    victim, victim_token, _, _ = pair
    get_user_model().objects.filter(email="victim@example.com").update(is_active=False)
    assert victim.api_get("/get-session").json() is None
    assert not Session.objects.filter(token=victim_token).exists()


def test_sign_out_from_another_site_with_cookie_needs_trusted_origin(pair):
    victim, victim_token, _, _ = pair
    response = victim.api_post("/sign-out", None, HTTP_ORIGIN="https://evil.example")
    assert response.status_code == 403
    assert Session.objects.filter(token=victim_token).exists()
