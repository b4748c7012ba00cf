"""I1: a session ended on the server opens nothing but get-session's stale answer, and not even that
on the device that ended it.

A genuine session_data cookie outlives its session: the cache is trusted for max_age without the
database (better-auth's trade-off, docs/sessions.md). The attack replays the cookies of a signed-out or
revoked session. On the same device, sign-out and revoke expire the cache, so an honest browser reads
the database next. Everywhere, every endpoint other than get-session, the middleware's ``request.user``
and DRF read the database: the fresh and sensitive guards (list-sessions, change-password,
delete-user, revoke-*) refuse the replayed cookies. Defence: the cache has one reader
(authservice/cookie_cache.py ``served``, called by get-session only).
"""

import pytest

from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient
from tests.cookie_cache_support import DATA, cache_on, cached, data_cookies, fresh_client  # noqa: F401

pytestmark = pytest.mark.django_db

TOKEN = "auth.session_token"


@pytest.fixture
def replay(cached):
    """The cookies of ``cached`` kept aside, then its session revoked on the server."""
    saved = {TOKEN: cached.cookies[TOKEN].value, **data_cookies(cached)}
    Session.objects.filter(token=cached.token).delete()
    return fresh_client(saved)


def test_after_sign_out_the_same_browser_gets_no_session(cached):
    cached.api_post("/sign-out")
    assert cached.api_get("/get-session").content == b"null"


def test_after_revoking_its_own_session_the_same_browser_gets_no_session(cached):
    cached.api_post("/revoke-session", {"token": cached.token})
    assert cached.api_get("/get-session").content == b"null"


def test_after_revoke_sessions_the_same_browser_gets_no_session(cached):
    cached.api_post("/revoke-sessions")
    assert cached.api_get("/get-session").content == b"null"


@pytest.mark.parametrize("method, path, body", [
    ("GET", "/list-sessions", None),
    ("POST", "/change-password", {"currentPassword": PASSWORD, "newPassword": "another password 123"}),
    ("POST", "/delete-user", {"password": PASSWORD}),
    ("POST", "/revoke-other-sessions", {}),
    ("POST", "/update-user", {"name": "Mallory"}),
    ("POST", "/verify-password", {"password": PASSWORD}),
])
def test_a_replayed_cache_of_a_revoked_session_opens_no_guarded_endpoint(replay, method, path, body):
    if method == "GET":
        response = replay.api_get(path)
    else:
        response = replay.api_post(path, body)
    assert response.status_code == 401, (path, response.content)


def test_a_replayed_cache_of_a_revoked_session_is_nobody_to_request_user(replay):
    response = replay.get("/me/")  # login_required: anonymous callers are sent to the login page
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_disable_cookie_cache_sees_the_revocation(replay):
    assert replay.api_get("/get-session", {"disableCookieCache": "true"}).content == b"null"


def test_a_replayed_cache_is_still_answered_by_get_session_until_max_age(replay):
    # The documented trade-off (better-auth's): a stateless cache cannot see a revocation.
    assert replay.api_get("/get-session").json()["user"]["email"] == "ada@example.com"
