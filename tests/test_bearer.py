"""Bearer tokens (better-auth's ``bearer`` plugin): ``AUTHSERVICE["bearer"]``, off by default.

On: ``Authorization: Bearer <token>`` names the session on every endpoint that reads one, and every
answer that sets the session cookie also carries ``set-auth-token`` (the cookie's signed value).
"""

from datetime import timedelta
from urllib.parse import unquote

import pytest
from django.utils import timezone

from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db

COOKIE = "auth.session_token"


@pytest.fixture
def bearer_on(configure):
    configure(bearer={"enabled": True})


@pytest.fixture
def app():
    """A mobile app: no cookie jar, no Origin."""
    return ApiClient(origin=None)


def sign_in(client, user):
    return client.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD})


def with_bearer(token):
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def token(bearer_on, user):
    """The set-auth-token of a sign-in."""
    return sign_in(ApiClient(), user)["set-auth-token"]


# --- off by default ----------------------------------------------------------------------------------
def test_bearer_is_off_by_default(settings):
    from authservice import app_settings

    assert app_settings.bearer.enabled is False
    assert app_settings.bearer.require_signature is False


def test_off_the_authorization_header_is_ignored(signed_in, app):
    value = signed_in.cookies[COOKIE].value
    assert app.api_get("/get-session", **with_bearer(value)).json() is None


def test_off_sign_in_sends_no_set_auth_token(api, user):
    response = sign_in(api, user)
    assert "set-auth-token" not in response
    # The example project's CORS middleware may expose the header name; no token goes with it.
    assert "set-auth-token" not in response.get("Access-Control-Expose-Headers", "").lower() or \
        "Access-Control-Allow-Origin" in response


# --- set-auth-token ---------------------------------------------------------------------------------
def test_sign_in_sends_the_session_cookie_value_as_set_auth_token(bearer_on, api, user):
    response = sign_in(api, user)
    assert response["set-auth-token"] == response.cookies[COOKIE].value
    assert unquote(response["set-auth-token"]).split(".")[0] == response.json()["token"]


def test_set_auth_token_is_exposed_to_cross_origin_scripts(bearer_on, api, user):
    assert sign_in(api, user)["Access-Control-Expose-Headers"] == "set-auth-token"


def test_sign_up_sends_set_auth_token(bearer_on, api, db):
    response = api.api_post("/sign-up/email", {"name": "Ada", "email": "ada@example.com",
                                               "password": PASSWORD})
    assert response["set-auth-token"] == response.cookies[COOKIE].value


def test_sign_up_without_a_session_sends_no_set_auth_token(bearer_on, configure, api, db):
    configure(email_and_password={"auto_sign_in": False})
    response = api.api_post("/sign-up/email", {"name": "Ada", "email": "ada@example.com",
                                               "password": PASSWORD})
    assert "set-auth-token" not in response


def test_a_failed_sign_in_sends_no_set_auth_token(bearer_on, api, user):
    response = api.api_post("/sign-in/email", {"email": user.email, "password": "wrong password"})
    assert response.status_code == 401
    assert "set-auth-token" not in response


def test_a_refresh_through_the_bearer_sends_a_new_set_auth_token(token, app):
    Session.objects.update(expires_at=timezone.now() + timedelta(days=1))
    response = app.api_get("/get-session", **with_bearer(token))
    assert response["set-auth-token"] == response.cookies[COOKIE].value


def test_in_process_calls_return_set_auth_token_in_their_headers(bearer_on, user):
    from authservice import auth

    result = auth.api.sign_in_email(body={"email": user.email, "password": PASSWORD}, headers={},
                                    return_headers=True)
    assert result["headers"].get("set-auth-token")
    assert "set-auth-token" in result["headers"].get("access-control-expose-headers")


# --- reading the session ------------------------------------------------------------------------------
def test_get_session_with_the_set_auth_token(token, app):
    assert app.api_get("/get-session", **with_bearer(token)).json()["user"]["email"] == "ada@example.com"


def test_get_session_with_the_decoded_signed_token(token, app):
    assert app.api_get("/get-session", **with_bearer(unquote(token))).json()["user"]["email"] == \
        "ada@example.com"


def test_get_session_with_the_raw_token_of_the_sign_in_body(bearer_on, user, app):
    raw = sign_in(ApiClient(), user).json()["token"]
    assert app.api_get("/get-session", **with_bearer(raw)).json()["session"]["token"] == raw


def test_the_raw_token_is_refused_when_signatures_are_required(configure, user, app):
    configure(bearer={"enabled": True, "require_signature": True})
    raw = sign_in(ApiClient(), user).json()["token"]
    assert app.api_get("/get-session", **with_bearer(raw)).json() is None


def test_a_signed_token_works_when_signatures_are_required(configure, user, app):
    configure(bearer={"enabled": True, "require_signature": True})
    signed = sign_in(ApiClient(), user)["set-auth-token"]
    assert app.api_get("/get-session", **with_bearer(signed)).json()["user"]["email"] == "ada@example.com"


def test_the_scheme_is_case_insensitive(token, app):
    response = app.api_get("/get-session", HTTP_AUTHORIZATION=f"bEaReR {token}")
    assert response.json()["user"]["email"] == "ada@example.com"


def test_list_sessions_with_a_bearer(token, app):
    assert len(app.api_get("/list-sessions", **with_bearer(token)).json()) == 1


def test_sign_out_with_a_bearer_ends_the_session(token, app):
    response = app.api_post("/sign-out", **with_bearer(token))
    assert response.json() == {"success": True}
    assert "set-auth-token" not in response
    assert not Session.objects.exists()


def test_the_middleware_reads_a_bearer(token, app):
    assert app.get("/me/", **with_bearer(token)).json() == {"email": "ada@example.com"}


# --- bad tokens -----------------------------------------------------------------------------------------
BAD = ["", "garbage", "a.b", "%zz.%zz", "x" * 200, "only.dots.here", "tok\x00en", "é", ".",
       "abc." + "A" * 43 + "=", "Basic Zm9vOmJhcg=="]


@pytest.mark.parametrize("value", BAD)
def test_a_bad_bearer_token_is_a_null_session(bearer_on, app, db, value):
    response = app.api_get("/get-session", **with_bearer(value))
    assert response.status_code == 200
    assert response.json() is None


@pytest.mark.parametrize("value", BAD)
def test_a_bad_bearer_token_is_401_where_a_session_is_required(bearer_on, app, db, value):
    assert app.api_get("/list-sessions", **with_bearer(value)).status_code == 401


def test_another_scheme_is_ignored(token, app):
    assert app.api_get("/get-session", HTTP_AUTHORIZATION=f"Token {token}").json() is None


def test_a_bearer_of_a_revoked_session_is_a_null_session(token, app):
    Session.objects.all().delete()
    assert app.api_get("/get-session", **with_bearer(token)).json() is None
