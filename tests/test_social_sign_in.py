"""POST /sign-in/social, the state it writes, and GET /callback/:provider's checks (core.md §5.1–§5.4),
against a stub OpenID provider on a loopback port."""

import json
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from authservice import signals, users
from authservice.models import Account, Session, Verification
from tests.conftest import ORIGIN, error_of
from tests.peers.social import (  # noqa: F401 - fixtures
    CLIENT_ID, _stub_server, callback, corp, error_location, nothing_created, query_of,
    sign_in_with_corp, start, stub,
)

pytestmark = pytest.mark.django_db
ERROR_PAGE = f"{ORIGIN}/api/auth/error"


# --- POST /sign-in/social ----------------------------------------------------------------------
def test_sign_in_social_answers_the_authorize_url_with_location_and_state_cookie(api, corp):
    response, query = start(api, callbackURL="/dashboard")
    body = response.json()
    assert body == {"url": body["url"], "redirect": True}
    assert response["Location"] == body["url"]
    assert body["url"].startswith(f"{corp.issuer}/authorize?")
    assert query["response_type"] == "code" and query["client_id"] == CLIENT_ID
    assert query["redirect_uri"] == f"{ORIGIN}/api/auth/callback/corp"
    assert query["scope"] == "openid email profile"
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert len(query["state"]) == 32 and len(query["nonce"]) == 32
    cookie = response.cookies["auth.state"]
    assert cookie["max-age"] == 300 and cookie["httponly"] and cookie["samesite"] == "Lax"
    assert cookie.value.startswith(query["state"] + ".")


def test_state_row_holds_the_flow_for_ten_minutes(api, corp):
    _, query = start(api, callbackURL="/dashboard", errorCallbackURL="/oops",
                     newUserCallbackURL="/welcome", additionalData={"plan": "pro", "codeVerifier": "x"})
    row = Verification.objects.get(identifier=query["state"])
    value = json.loads(row.value)
    assert value["callbackURL"] == "/dashboard" and value["errorURL"] == "/oops"
    assert value["newUserURL"] == "/welcome" and value["additionalData"]["plan"] == "pro"
    assert len(value["codeVerifier"]) == 128 and value["codeVerifier"] != "x"
    assert value["idTokenNonce"] == query["nonce"] and value["oauthState"] == query["state"]
    assert 590 <= (row.expires_at - timezone.now()).total_seconds() <= 600


def test_disable_redirect_keeps_the_url_but_sends_no_location(api, corp):
    response, _ = start(api, disableRedirect=True)
    assert response.json()["redirect"] is False and response.json()["url"]
    assert "Location" not in response


def test_callback_url_defaults_to_the_public_origin(api, corp):
    _, query = start(api)
    assert json.loads(Verification.objects.get(identifier=query["state"]).value)["callbackURL"] == ORIGIN


def test_requested_scopes_are_added_and_login_hint_and_params_sent(api, corp):
    _, query = start(api, scopes=["groups"], loginHint="ada@example.com", additionalParams={"hd": "x.org"})
    assert query["scope"] == "openid email profile groups"
    assert query["login_hint"] == "ada@example.com" and query["hd"] == "x.org"


def test_reserved_additional_params_are_refused(api, corp):
    response = api.api_post("/sign-in/social", {"provider": "corp", "additionalParams": {"state": "x"}})
    assert response.status_code == 400
    assert error_of(response)["message"].startswith(
        "[body.additionalParams] additionalParams cannot include reserved OAuth parameters: state")


def test_unknown_provider_is_404(api, corp):
    response = api.api_post("/sign-in/social", {"provider": "myspace"})
    assert response.status_code == 404 and error_of(response)["code"] == "PROVIDER_NOT_FOUND"


def test_provider_is_required(api, corp):
    response = api.api_post("/sign-in/social", {})
    assert response.status_code == 400
    assert error_of(response)["message"] == "[body.provider] Invalid input: expected string, received undefined"


@pytest.mark.parametrize("field, code", [
    ("callbackURL", "INVALID_CALLBACK_URL"), ("errorCallbackURL", "INVALID_ERROR_CALLBACK_URL"),
    ("newUserCallbackURL", "INVALID_NEW_USER_CALLBACK_URL")])
def test_untrusted_redirect_targets_are_refused(api, corp, field, code):
    response = api.api_post("/sign-in/social", {"provider": "corp", field: "https://evil.example/x"})
    assert response.status_code == 403 and error_of(response)["code"] == code
    assert not Verification.objects.exists()


def test_issuer_outside_trusted_origins_is_never_fetched(api, corp, configure, stub):
    configure(trusted_origins=[])
    response = api.api_post("/sign-in/social", {"provider": "corp"})
    assert response.status_code == 400 and error_of(response)["code"] == "INVALID_OAUTH_CONFIGURATION"
    assert stub.requests == []


# --- the callback: success -------------------------------------------------------------------------
def test_new_user_signs_in_and_lands_on_new_user_url(api, corp):
    created = []
    signals.user_created.connect(lambda **kw: created.append(kw["provider"]), weak=False,
                                 dispatch_uid="t-created")
    try:
        _, query = start(api, callbackURL="/dashboard", newUserCallbackURL="/welcome")
        corp.token_claims = corp.claims(query["nonce"], sub="sub-ada")
        response = callback(api, code="code-1", state=query["state"])
    finally:
        signals.user_created.disconnect(dispatch_uid="t-created")
    assert response.status_code == 302 and response["Location"] == "/welcome"
    user = get_user_model().objects.get()
    assert (user.email, users.name_of(user), users.is_email_verified(user)) == ("ada@example.com", "Ada Lovelace", True)
    account = Account.objects.get(provider_id="corp")
    assert account.user == user and account.account_id == "sub-ada"
    assert account.scope == "openid,email,profile"
    assert account.access_token == "access-1" and account.refresh_token == "refresh-1"
    assert account.id_token and account.access_token_expires_at > timezone.now()
    assert created == ["corp"]
    assert response.cookies["auth.state"]["max-age"] == 0
    session_cookie = response.cookies["auth.session_token"].value
    assert Session.objects.get(user=user).token == session_cookie.split(".")[0]
    assert api.api_get("/get-session").json()["user"]["email"] == "ada@example.com"


def test_token_is_exchanged_with_basic_auth_and_the_pkce_verifier(api, corp, stub):
    _, query = start(api)
    corp.token_claims = corp.claims(query["nonce"])
    callback(api, code="code-1", state=query["state"])
    token_call = stub.calls("/token")[0]
    assert token_call.headers["authorization"].startswith("Basic ")
    assert "client_secret" not in token_call.form
    assert len(token_call.form["code_verifier"]) == 128 and token_call.form["code"] == "code-1"


def test_returning_user_signs_in_to_callback_url(api, corp):
    sign_in_with_corp(api, corp, sub="sub-ada")
    api.cookies.clear()
    response = sign_in_with_corp(api, corp, sub="sub-ada")
    assert response["Location"] == "/dashboard"
    assert get_user_model().objects.count() == 1 and Session.objects.count() == 2


def test_email_comes_from_userinfo_when_the_id_token_has_none(api, corp):
    corp.userinfo = {"sub": "sub-ada", "email": "Ada@Example.com", "email_verified": True, "name": "Ada"}
    _, query = start(api)
    corp.token_claims = corp.claims(query["nonce"], sub="sub-ada", email=None, name=None)
    response = callback(api, code="c", state=query["state"])
    assert response.status_code == 302 and "error" not in response["Location"]
    assert get_user_model().objects.get().email == "ada@example.com"


def test_userinfo_about_another_subject_is_refused(api, corp):
    corp.userinfo = {"sub": "someone-else", "email": "ada@example.com"}
    _, query = start(api, errorCallbackURL="/oops")
    corp.token_claims = corp.claims(query["nonce"], email=None)
    response = callback(api, code="c", state=query["state"])
    assert error_location(response) == "/oops?error=unable_to_get_user_info"
    assert nothing_created()


# --- the callback: state -------------------------------------------------------------------------
def test_missing_state_goes_to_the_default_error_page(api, corp):
    assert error_location(callback(api, code="c")) == f"{ERROR_PAGE}?error=state_not_found"
    assert nothing_created()


def test_unknown_state_is_a_mismatch_on_the_default_error_page(api, corp):
    response = callback(api, code="c", state="x" * 32)
    assert error_location(response) == f"{ERROR_PAGE}?error=state_mismatch"
    assert nothing_created()


def test_replayed_state_is_refused_even_with_its_cookie(api, corp):
    _, query = start(api, errorCallbackURL="/oops")
    state_cookie = api.cookies["auth.state"].value
    corp.token_claims = corp.claims(query["nonce"])
    assert "error" not in callback(api, code="c", state=query["state"])["Location"]
    api.cookies.clear()
    api.cookies["auth.state"] = state_cookie  # an attacker who captured the whole first request
    response = callback(api, code="c", state=query["state"])
    assert error_location(response) == f"{ERROR_PAGE}?error=state_mismatch"
    assert get_user_model().objects.count() == 1 and Session.objects.count() == 1


def test_state_without_its_cookie_is_refused_and_kept(api, corp):
    _, query = start(api, errorCallbackURL="/oops")
    del api.cookies["auth.state"]
    response = callback(api, code="c", state=query["state"])
    assert error_location(response) == "/oops?error=state_mismatch"
    assert nothing_created() and Verification.objects.filter(identifier=query["state"]).exists()


def test_cookie_of_another_flow_is_refused(api, corp):
    _, first = start(api, errorCallbackURL="/oops")
    first_cookie = api.cookies["auth.state"].value
    _, second = start(api)
    api.cookies["auth.state"] = first_cookie
    corp.token_claims = corp.claims(second["nonce"])
    response = callback(api, code="c", state=second["state"])
    assert error_location(response) == f"{ERROR_PAGE}?error=state_mismatch"
    assert nothing_created()


def test_forged_state_cookie_is_refused(api, corp):
    _, query = start(api, errorCallbackURL="/oops")
    api.cookies["auth.state"] = query["state"] + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%3D"
    assert error_location(callback(api, code="c", state=query["state"])) == "/oops?error=state_mismatch"
    assert nothing_created()


def test_expired_state_is_refused(api, corp):
    _, query = start(api, errorCallbackURL="/oops")
    Verification.objects.filter(identifier=query["state"]).update(expires_at=timezone.now())
    row = Verification.objects.get(identifier=query["state"])
    value = json.loads(row.value)
    value["expiresAt"] = 0
    row.value = json.dumps(value)
    row.save()
    assert error_location(callback(api, code="c", state=query["state"])) == "/oops?error=state_mismatch"
    assert nothing_created() and not Verification.objects.exists()


def test_state_of_another_provider_is_refused(api, corp, configure, stub):
    configure(social_providers={"corp": {"type": "oidc", "issuer": stub.url, "clientId": CLIENT_ID,
                                         "clientSecret": "s"},
                                "github": {"clientId": "gh", "clientSecret": "s"}})
    _, query = start(api, errorCallbackURL="/oops")
    response = callback(api, "github", code="c", state=query["state"])
    assert error_location(response) == "/oops?error=state_mismatch"
    assert nothing_created()


# --- the callback: provider answers ----------------------------------------------------------------
def test_provider_error_is_passed_on_with_its_description(api, corp):
    _, query = start(api, errorCallbackURL=f"{ORIGIN}/login?x=1")
    response = callback(api, state=query["state"], error="access_denied", error_description="User said no")
    assert error_location(response) == (f"{ORIGIN}/login?x=1&error=access_denied"
                                         "&error_description=User+said+no")
    assert nothing_created()


def test_missing_code_is_no_code(api, corp):
    _, query = start(api, errorCallbackURL="/oops")
    assert error_location(callback(api, state=query["state"])) == "/oops?error=no_code"
    assert nothing_created()


def test_token_endpoint_failure_is_invalid_code(api, corp, stub):
    stub.routes[("POST", "/token")] = (400, {"error": "invalid_grant"})
    _, query = start(api, errorCallbackURL="/oops")
    assert error_location(callback(api, code="c", state=query["state"])) == "/oops?error=invalid_code"
    assert nothing_created()


def test_iss_parameter_of_another_issuer_is_refused(api, corp):
    _, query = start(api, errorCallbackURL="/oops")
    corp.token_claims = corp.claims(query["nonce"])
    response = callback(api, code="c", state=query["state"], iss="https://evil.example")
    assert error_location(response) == "/oops?error=issuer_mismatch"
    assert nothing_created()


def test_iss_parameter_of_the_issuer_is_accepted(api, corp):
    _, query = start(api)
    corp.token_claims = corp.claims(query["nonce"])
    response = callback(api, code="c", state=query["state"], iss=corp.issuer)
    assert "error" not in response["Location"]


def test_repeated_parameters_are_an_invalid_callback_request(api, corp):
    response = api.get("/api/auth/callback/corp?state=a&state=b&code=c")
    assert error_location(response) == f"{ERROR_PAGE}?error=invalid_callback_request"


def test_provider_without_email_is_email_not_found(api, corp):
    corp.userinfo = {"sub": "stub-user-1"}
    _, query = start(api, errorCallbackURL="/oops")
    corp.token_claims = corp.claims(query["nonce"], email=None)
    assert error_location(callback(api, code="c", state=query["state"])) == "/oops?error=email_not_found"
    assert nothing_created()


def test_unconfigured_provider_after_start_is_provider_not_found(api, corp, configure):
    _, query = start(api, errorCallbackURL="/oops")
    configure(social_providers={"corp": {"enabled": False}})
    response = callback(api, code="c", state=query["state"])
    assert error_location(response) == "/oops?error=oauth_provider_not_found"


def test_configured_error_url_is_the_default_target(api, corp, configure):
    configure(error_url="https://app.example.com/auth-error")
    response = callback(api, code="c")
    assert error_location(response) == "https://app.example.com/auth-error?error=state_not_found"


def test_post_callback_bounces_to_get_with_merged_parameters(api, corp):
    response = api.post("/api/auth/callback/corp?state=s1", "code=c1&user=%7B%7D&state=ignored",
                        content_type="application/x-www-form-urlencoded")
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == f"{ORIGIN}/api/auth/callback/corp"
    assert query_of(response["Location"]) == {"code": "c1", "user": "{}", "state": "s1"}
