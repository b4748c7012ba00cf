"""The session cookie cache: better-auth's session.cookieCache, compact strategy (issue 18 §2).

The attacks on it (forged, truncated, re-ordered, expired, swapped, revoked) are in
tests/security/test_attack18_cookie_cache_*.py; better-auth's own encoder and client in
tests/test_cookie_cache_better_auth.py.
"""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient
from tests.cookie_cache_support import (  # noqa: F401 - fixtures
    DATA, cache_on, cached, data_cookies, decoded, forge, give_long_name, sign_in,
)
from tests.test_cookies import set_cookies
from tests.two_factor_support import pending, staff, staff_required  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def db_answer(client):
    return client.api_get("/get-session", {"disableCookieCache": "true"}).json()


# --- when it is set -------------------------------------------------------------------------------
def test_sign_in_sets_session_data_for_the_cache_max_age(cached):
    response = cached.api_post("/sign-in/email", {"email": cached.user.email, "password": PASSWORD})
    value, attrs = set_cookies(response)[DATA]
    assert value
    assert attrs["max-age"] == "300"
    assert attrs["httponly"] is True and attrs["path"] == "/" and attrs["samesite"] == "Lax"


def test_without_the_setting_sign_in_sets_no_session_data(api, user):
    sign_in(api, user)
    assert data_cookies(api) == {}


def test_max_age_is_a_setting(configure, api, user):
    configure(session={"cookie_cache": {"enabled": True, "max_age": 60}})
    response = api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD})
    assert set_cookies(response)[DATA][1]["max-age"] == "60"


def test_the_cookie_holds_what_get_session_answers_in_better_auths_layout(cached):
    payload = decoded(data_cookies(cached)[DATA])
    assert list(payload) == ["session", "expiresAt", "signature"]
    assert list(payload["session"]) == ["session", "user", "updatedAt", "version"]
    assert payload["session"]["version"] == "1"
    assert {"session": payload["session"]["session"], "user": payload["session"]["user"]} == db_answer(cached)


def test_sign_up_sets_session_data(cache_on, api):
    response = api.api_post("/sign-up/email", {"email": "new@example.com", "password": PASSWORD, "name": "N"})
    assert response.status_code == 200
    assert decoded(data_cookies(api)[DATA])["session"]["user"]["email"] == "new@example.com"


def test_dont_remember_gives_a_browser_session_cookie_trusted_for_a_minute(cache_on, api, user):
    response = api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD, "rememberMe": False})
    value, attrs = set_cookies(response)[DATA]
    assert "max-age" not in attrs
    payload = decoded(value)
    assert 59_000 <= payload["expiresAt"] - payload["session"]["updatedAt"] <= 60_000


# --- get-session ----------------------------------------------------------------------------------
def test_get_session_answers_from_the_cache_without_a_query(cached, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = cached.api_get("/get-session")
    assert response.status_code == 200
    assert response.json()["session"]["token"] == cached.token


def test_the_cached_answer_is_the_database_answer(cached):
    assert cached.api_get("/get-session").json() == db_answer(cached)


def test_a_cached_answer_varies_on_cookie_and_is_not_stored(cached):
    response = cached.api_get("/get-session")
    assert "cookie" in response["Vary"].lower()
    assert response["Cache-Control"] == "no-store"


def test_disable_cookie_cache_reads_the_database(cached):
    Session.objects.filter(token=cached.token).delete()
    response = cached.api_get("/get-session", {"disableCookieCache": "true"})
    assert response.content == b"null"


def test_without_session_data_get_session_reads_the_database_and_sets_it(cached):
    del cached.cookies[DATA]
    response = cached.api_get("/get-session")
    assert response.json()["session"]["token"] == cached.token
    assert set_cookies(response)[DATA][0]


def test_a_cache_of_another_version_is_read_again_and_re_issued(cached, configure):
    configure(session={"cookie_cache": {"enabled": True, "version": "2"}})
    response = cached.api_get("/get-session")
    assert response.json()["session"]["token"] == cached.token
    assert decoded(set_cookies(response)[DATA][0])["session"]["version"] == "2"


def test_update_user_refreshes_the_cache(cached, django_assert_num_queries):
    assert cached.api_post("/update-user", {"name": "Ada Lovelace"}).status_code == 200
    with django_assert_num_queries(0):
        assert cached.api_get("/get-session").json()["user"]["name"] == "Ada Lovelace"


def test_a_session_refresh_re_issues_the_cache(cached, configure):
    configure(session={"update_age": 0, "cookie_cache": {"enabled": True}})
    response = cached.api_get("/get-session", {"disableCookieCache": "true"})
    refreshed = response.json()["session"]["expiresAt"]
    assert decoded(set_cookies(response)[DATA][0])["session"]["session"]["expiresAt"] == refreshed


def test_a_bearer_request_reads_the_database(cached, configure):
    configure(bearer={"enabled": True})
    Session.objects.filter(token=cached.token).delete()
    other = sign_in(ApiClient(), cached.user)
    response = cached.api_get("/get-session", HTTP_AUTHORIZATION=f"Bearer {other.token}")
    assert response.json()["session"]["token"] == other.token


def test_a_session_still_to_enrol_is_never_cached_so_get_session_keeps_its_flag(cache_on, pending):
    sign_in(pending, pending.user)
    assert DATA not in data_cookies(pending)
    answer = pending.api_get("/get-session").json()
    assert answer["session"]["twoFactorEnrollmentRequired"] is True
    assert DATA not in data_cookies(pending)


def test_a_cache_left_from_when_it_was_on_is_cleared(cached, configure):
    configure(session={"cookie_cache": {"enabled": False}})
    response = cached.api_get("/get-session")
    assert response.json()["session"]["token"] == cached.token
    assert set_cookies(response)[DATA] == ("", set_cookies(response)[DATA][1])


# --- chunks ---------------------------------------------------------------------------------------
def test_a_cache_above_4_kb_is_split_into_numbered_chunks(cached):
    give_long_name(cached)
    names = set(data_cookies(cached))
    assert names == {f"{DATA}.0", f"{DATA}.1"}
    assert all(len(value) < 4050 for value in data_cookies(cached).values())


def test_a_chunked_cache_is_served_without_a_query(cached, django_assert_num_queries):
    give_long_name(cached)
    with django_assert_num_queries(0):
        assert cached.api_get("/get-session").json()["user"]["name"] == "A" * 3000


def test_a_shorter_cache_expires_the_old_chunks(cached):
    give_long_name(cached)
    response = cached.api_post("/update-user", {"name": "Ada"})
    written = set_cookies(response)
    assert written[f"{DATA}.0"][0] == written[f"{DATA}.1"][0] == ""
    assert written[DATA][0]


# --- sign-out and revoke --------------------------------------------------------------------------
def test_sign_out_clears_session_data(cached):
    response = cached.api_post("/sign-out")
    assert set_cookies(response)[DATA][0] == ""


def test_revoking_the_callers_own_session_clears_its_cache(cached):
    response = cached.api_post("/revoke-session", {"token": cached.token})
    assert set_cookies(response)[DATA][0] == ""


def test_revoking_every_session_clears_the_callers_cache(cached):
    assert set_cookies(cached.api_post("/revoke-sessions"))[DATA][0] == ""


# --- settings -------------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["jwt", "jwe"])
def test_a_strategy_other_than_compact_is_refused_by_the_checks(configure, strategy):
    configure(session={"cookie_cache": {"enabled": True, "strategy": strategy}})
    with pytest.raises(SystemCheckError, match=r"\['cookie_cache'\]\['strategy'\]"):
        call_command("check")


def test_a_non_positive_max_age_is_refused_by_the_checks(configure):
    configure(session={"cookie_cache": {"enabled": True, "max_age": 0}})
    with pytest.raises(SystemCheckError, match=r"\['cookie_cache'\]\['max_age'\]"):
        call_command("check")
