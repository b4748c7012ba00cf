"""GET /list-sessions, POST /revoke-session(s), /revoke-other-sessions, /update-session
(core.md §3.4, §4.16-§4.18)."""

from datetime import timedelta

from django.utils import timezone

from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.test_cookies import make_session, set_cookie_lines

SESSION_KEYS = {"id", "token", "userId", "expiresAt", "createdAt", "updatedAt", "ipAddress",
                "userAgent"}


def second_session(user):
    client = ApiClient()
    token = client.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD}).json()["token"]
    client.token = token
    return client


# --- list-sessions -----------------------------------------------------------------------------
def test_list_sessions_answers_an_array_of_sessions(signed_in):
    response = signed_in.api_get("/list-sessions")
    assert response.status_code == 200
    body = response.json()
    assert isinstance(body, list) and len(body) == 1
    assert set(body[0]) == SESSION_KEYS
    assert body[0]["token"] == signed_in.token


def test_list_sessions_lists_every_live_session_of_the_caller(signed_in):
    other = second_session(signed_in.user)
    tokens = {s["token"] for s in signed_in.api_get("/list-sessions").json()}
    assert tokens == {signed_in.token, other.token}


def test_list_sessions_leaves_out_expired_sessions(signed_in):
    expired = make_session(signed_in.user)
    Session.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    tokens = [s["token"] for s in signed_in.api_get("/list-sessions").json()]
    assert tokens == [signed_in.token]


def test_list_sessions_answers_the_newest_100_live_sessions_as_better_auth_caps_its_list(signed_in):
    # better-auth's adapter stops at defaultFindManyLimit (100); the caller's own session is the newest.
    for age in range(1, 121):
        make_session(signed_in.user, age=age)
    body = signed_in.api_get("/list-sessions").json()
    assert len(body) == 100
    assert body[-1]["token"] == signed_in.token
    created = [session["createdAt"] for session in body]
    assert created == sorted(created)


def test_list_sessions_leaves_out_other_users_sessions(signed_in, make_user):
    make_session(make_user(email="eve@example.com"))
    assert len(signed_in.api_get("/list-sessions").json()) == 1


def test_list_sessions_without_session_is_401(api, db):
    response = api.api_get("/list-sessions")
    assert response.status_code == 401
    assert error_of(response) == {"message": "Unauthorized", "code": "UNAUTHORIZED", "status": 401}


def test_list_sessions_of_a_stale_session_is_403_session_not_fresh(signed_in):
    Session.objects.filter(token=signed_in.token).update(
        created_at=timezone.now() - timedelta(seconds=86400 + 1))
    response = signed_in.api_get("/list-sessions")
    assert response.status_code == 403
    assert error_of(response) == {"message": "Session is not fresh", "code": "SESSION_NOT_FRESH",
                                  "status": 403}


def test_fresh_age_zero_switches_the_freshness_check_off(configure, signed_in):
    configure(session={"fresh_age": 0})
    Session.objects.filter(token=signed_in.token).update(
        created_at=timezone.now() - timedelta(days=3))
    assert signed_in.api_get("/list-sessions").status_code == 200


def test_list_sessions_is_never_cached(signed_in):
    assert signed_in.api_get("/list-sessions")["Cache-Control"] == "no-store"


# --- revoke-session ----------------------------------------------------------------------------
def test_revoke_session_deletes_that_session(signed_in):
    other = second_session(signed_in.user)
    response = signed_in.api_post("/revoke-session", {"token": other.token})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    assert not Session.objects.filter(token=other.token).exists()
    assert Session.objects.filter(token=signed_in.token).exists()


def test_revoke_session_of_the_current_session_ends_it(signed_in):
    signed_in.api_post("/revoke-session", {"token": signed_in.token})
    assert signed_in.api_get("/get-session").content == b"null"


def test_revoke_session_of_an_unknown_token_is_still_200(signed_in):
    response = signed_in.api_post("/revoke-session", {"token": "does-not-exist"})
    assert response.json() == {"status": True}


def test_revoke_session_of_another_users_session_is_200_but_deletes_nothing(signed_in, make_user):
    foreign = make_session(make_user(email="eve@example.com"))
    response = signed_in.api_post("/revoke-session", {"token": foreign.token})
    assert response.json() == {"status": True}
    assert Session.objects.filter(pk=foreign.pk).exists()


def test_revoke_session_requires_a_token(signed_in):
    response = signed_in.api_post("/revoke-session", {})
    assert error_of(response) == {
        "message": "[body.token] Invalid input: expected string, received undefined",
        "code": "VALIDATION_ERROR", "status": 400}


def test_revoke_session_without_session_is_401(api, db):
    response = api.api_post("/revoke-session", {"token": "x"})
    assert error_of(response)["code"] == "UNAUTHORIZED"


def test_revoke_session_with_a_malformed_body_and_no_session_is_400(api, db):
    response = api.api_post("/revoke-session", {"token": 5})
    assert response.status_code == 400
    assert error_of(response)["message"] == \
        "[body.token] Invalid input: expected string, received number"


# --- revoke-sessions ---------------------------------------------------------------------------
def test_revoke_sessions_deletes_all_the_callers_sessions(signed_in, make_user):
    second_session(signed_in.user)
    eve = make_session(make_user(email="eve@example.com"))
    response = signed_in.api_post("/revoke-sessions")
    assert response.json() == {"status": True}
    assert not Session.objects.filter(user=signed_in.user).exists()
    assert Session.objects.filter(pk=eve.pk).exists()


def test_revoke_sessions_does_not_clear_the_cookie(signed_in):
    response = signed_in.api_post("/revoke-sessions")
    assert set_cookie_lines(response) == []


def test_after_revoke_sessions_the_next_request_finds_no_session(signed_in):
    signed_in.api_post("/revoke-sessions")
    response = signed_in.api_get("/get-session")
    assert response.content == b"null"
    assert set_cookie_lines(response)


def test_revoke_sessions_ignores_any_body(signed_in):
    assert signed_in.api_post("/revoke-sessions", {"anything": [1, 2]}).json() == {"status": True}


def test_revoke_sessions_without_session_is_401(api, db):
    assert error_of(api.api_post("/revoke-sessions"))["code"] == "UNAUTHORIZED"


# --- revoke-other-sessions ---------------------------------------------------------------------
def test_revoke_other_sessions_keeps_only_the_current_one(signed_in):
    other = second_session(signed_in.user)
    third = second_session(signed_in.user)
    response = signed_in.api_post("/revoke-other-sessions")
    assert response.json() == {"status": True}
    remaining = set(Session.objects.filter(user=signed_in.user).values_list("token", flat=True))
    assert remaining == {signed_in.token}
    assert other.api_get("/get-session").content == b"null"
    assert third.api_get("/get-session").content == b"null"


def test_revoke_other_sessions_ignores_any_body(signed_in):
    assert signed_in.api_post("/revoke-other-sessions", {"x": 1}).json() == {"status": True}


def test_revoke_other_sessions_without_session_is_401(api, db):
    assert error_of(api.api_post("/revoke-other-sessions"))["code"] == "UNAUTHORIZED"


def test_revoke_endpoints_are_not_limited_by_freshness(signed_in):
    second_session(signed_in.user)
    Session.objects.filter(token=signed_in.token).update(created_at=timezone.now() - timedelta(days=3))
    assert signed_in.api_post("/revoke-other-sessions").status_code == 200


# --- update-session ----------------------------------------------------------------------------
def test_update_session_without_fields_is_400_no_fields_to_update(signed_in):
    response = signed_in.api_post("/update-session", {})
    assert error_of(response) == {"message": "No fields to update", "code": "NO_FIELDS_TO_UPDATE",
                                  "status": 400}


def test_update_session_with_unknown_fields_is_400_no_fields_to_update(signed_in):
    response = signed_in.api_post("/update-session", {"color": "blue"})
    assert error_of(response)["code"] == "NO_FIELDS_TO_UPDATE"


def test_update_session_without_session_is_401(api, db):
    assert error_of(api.api_post("/update-session", {}))["code"] == "UNAUTHORIZED"


def test_an_endpoint_that_reads_the_session_varies_on_cookie(signed_in):
    response = signed_in.api_get("/list-accounts")
    assert response.status_code == 200
    assert "cookie" in {value.strip().lower() for value in response["Vary"].split(",")}


def test_an_endpoint_that_clears_the_session_cookie_is_private(signed_in):
    Session.objects.filter(token=signed_in.token).delete()
    response = signed_in.api_get("/list-accounts")
    assert response.status_code == 401
    assert response["Cache-Control"] == "private"
