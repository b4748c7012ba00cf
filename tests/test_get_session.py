"""GET /get-session and session resolution: expiry, refresh, don't-remember (core.md §3.2, §4.6)."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from authservice.models import Session
from tests.conftest import BASE, error_of
from tests.test_cookies import make_session, set_cookie_lines, set_cookies

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
SESSION_KEYS = {"id", "token", "userId", "expiresAt", "createdAt", "updatedAt", "ipAddress",
                "userAgent"}
# The example project turns the twoFactor plugin on (AUTH_TWO_FACTOR), which adds twoFactorEnabled.
USER_KEYS = {"id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt", "twoFactorEnabled"}


def test_get_session_answers_session_and_user(signed_in):
    response = signed_in.api_get("/get-session")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"session", "user"}
    assert set(body["session"]) == SESSION_KEYS
    assert set(body["user"]) == USER_KEYS
    assert body["session"]["token"] == signed_in.token
    assert body["session"]["userId"] == body["user"]["id"] == str(signed_in.user.pk)
    for key in ("expiresAt", "createdAt", "updatedAt"):
        assert ISO.match(body["session"][key])


def test_get_session_without_cookie_is_the_literal_null(api, db):
    response = api.api_get("/get-session")
    assert response.status_code == 200
    assert response.content == b"null"
    assert response["Content-Type"] == "application/json"


def test_get_session_is_never_cached(api, db):
    response = api.api_get("/get-session")
    assert response["Cache-Control"] == "no-store"
    assert response["Pragma"] == "no-cache"


def test_get_session_with_a_session_is_never_cached(signed_in):
    response = signed_in.api_get("/get-session")
    assert response["Cache-Control"] == "no-store"
    assert response["Pragma"] == "no-cache"


def test_get_session_varies_on_cookie(signed_in):
    vary = {value.strip().lower() for value in signed_in.api_get("/get-session")["Vary"].split(",")}
    assert "cookie" in vary


def test_get_session_sets_no_cookie_for_a_young_session(signed_in):
    assert set_cookie_lines(signed_in.api_get("/get-session")) == []


def test_get_session_of_an_unknown_token_is_null_and_clears_cookies(api, db):
    from authservice.cookies import signed_value

    api.cookies["auth.session_token"] = signed_value("A" * 32)
    response = api.api_get("/get-session")
    assert response.content == b"null"
    assert {name: value for name, (value, _) in set_cookies(response).items()} == {
        "auth.session_token": "", "auth.session_data": "", "auth.dont_remember": ""}


def test_an_expired_session_is_null_clears_cookies_and_is_deleted(signed_in):
    Session.objects.filter(token=signed_in.token).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    response = signed_in.api_get("/get-session")
    assert response.status_code == 200
    assert response.content == b"null"
    cookies = set_cookies(response)
    assert set(cookies) == {"auth.session_token", "auth.session_data", "auth.dont_remember"}
    assert all(value == "" and attrs["max-age"] == "0" for value, attrs in cookies.values())
    assert not Session.objects.filter(token=signed_in.token).exists()


def test_a_session_is_refreshed_after_update_age(signed_in):
    # Last extended a day and a second ago: due for an extension.
    now = timezone.now()
    Session.objects.filter(token=signed_in.token).update(
        expires_at=now + timedelta(seconds=604800 - 86401), updated_at=now - timedelta(seconds=86401))
    response = signed_in.api_get("/get-session")
    session = Session.objects.get(token=signed_in.token)
    expected = timezone.now() + timedelta(seconds=604800)
    assert abs((session.expires_at - expected).total_seconds()) < 5
    assert abs((session.updated_at - timezone.now()).total_seconds()) < 5
    value, attrs = set_cookies(response)["auth.session_token"]
    from authservice.cookies import signed_value

    assert value == signed_value(signed_in.token)
    assert attrs["max-age"] == "604800"
    assert response.json()["session"]["expiresAt"] == \
        session.expires_at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{session.expires_at.microsecond // 1000:03d}Z"


def test_a_session_deleted_while_being_refreshed_is_401_failed_to_get_session(signed_in, monkeypatch):
    from authservice.models import SessionManager

    Session.objects.filter(token=signed_in.token).update(expires_at=timezone.now() + timedelta(days=1))
    original = SessionManager.with_user

    def with_user(self, token):  # a concurrent sign-out lands between the lookup and the refresh
        session = original(self, token)
        Session.objects.filter(pk=session.pk).delete()
        return session

    monkeypatch.setattr(SessionManager, "with_user", with_user)
    response = signed_in.api_get("/get-session")
    assert response.status_code == 401
    assert error_of(response)["code"] == "FAILED_TO_GET_SESSION"
    assert set_cookies(response)["auth.session_token"][0] == ""


def test_a_session_is_not_refreshed_before_update_age(signed_in):
    before = Session.objects.get(token=signed_in.token).expires_at
    Session.objects.filter(token=signed_in.token).update(
        expires_at=before - timedelta(seconds=86400 - 60))
    response = signed_in.api_get("/get-session")
    assert set_cookie_lines(response) == []
    assert Session.objects.get(token=signed_in.token).expires_at == before - timedelta(seconds=86340)


def test_disable_refresh_leaves_a_due_session_alone(signed_in):
    stale = timezone.now() + timedelta(days=2)
    Session.objects.filter(token=signed_in.token).update(expires_at=stale)
    response = signed_in.api_get("/get-session", {"disableRefresh": "true"})
    assert response.json()["session"]["token"] == signed_in.token
    assert set_cookie_lines(response) == []
    assert Session.objects.get(token=signed_in.token).expires_at == stale


@pytest.mark.parametrize("value", ["false", "0", "1"])
def test_query_flags_are_true_for_any_non_empty_value(signed_in, value):
    stale = timezone.now() + timedelta(days=2)
    Session.objects.filter(token=signed_in.token).update(expires_at=stale)
    signed_in.api_get("/get-session", {"disableRefresh": value})
    assert Session.objects.get(token=signed_in.token).expires_at == stale


def test_an_empty_flag_is_false(signed_in):
    stale = timezone.now() + timedelta(days=2)
    Session.objects.filter(token=signed_in.token).update(expires_at=stale)
    signed_in.api_get("/get-session", {"disableRefresh": ""})
    assert Session.objects.get(token=signed_in.token).expires_at > stale


def test_disable_cookie_cache_is_accepted(signed_in):
    response = signed_in.api_get("/get-session", {"disableCookieCache": "true"})
    assert response.json()["session"]["token"] == signed_in.token


def test_update_age_is_a_setting(configure, signed_in):
    configure(session={"update_age": 0})
    response = signed_in.api_get("/get-session")
    assert "auth.session_token" in set_cookies(response)


def test_expires_in_is_a_setting(configure, api, user):
    configure(session={"expires_in": 3600})
    response = api.api_post("/sign-in/email", {"email": user.email, "password": "correct horse battery"})
    assert set_cookies(response)["auth.session_token"][1]["max-age"] == "3600"
    session = Session.objects.get(token=response.json()["token"])
    assert (session.expires_at - session.created_at).total_seconds() == pytest.approx(3600, abs=2)


def test_post_get_session_is_405(api, db):
    response = api.api_post("/get-session")
    assert response.status_code == 405
    assert error_of(response) == {
        "message": "POST method requires deferSessionRefresh to be enabled in session config",
        "code": "METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED", "status": 405}


def test_get_session_works_without_origin_header(signed_in):
    response = signed_in.get(BASE + "/get-session")
    assert response.json()["session"]["token"] == signed_in.token


def test_get_session_of_another_users_session_is_that_user(make_user, api):
    from authservice.cookies import signed_value

    other = make_user(email="other@example.com")
    session = make_session(other)
    api.cookies["auth.session_token"] = signed_value(session.token)
    assert api.api_get("/get-session").json()["user"]["email"] == "other@example.com"


def test_a_deactivated_users_session_ends(signed_in):
    signed_in.user.is_active = False
    signed_in.user.save()
    response = signed_in.api_get("/get-session")
    assert response.content == b"null"
    assert set_cookies(response)["auth.session_token"][0] == ""
    assert not Session.objects.filter(token=signed_in.token).exists()
