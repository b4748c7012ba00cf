"""Built-in providers against local stubs of their documented responses: GitHub's user API, Apple's
form_post callback, Discord, GitLab, Google and Microsoft profile mapping (core.md §5.0)."""

import hashlib
import json
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from authservice import users
from authservice.models import Account, Session
from tests.conftest import ORIGIN
from tests.peers import keys
from tests.peers.social import (  # noqa: F401 - fixtures
    _stub_server, callback, error_location, nothing_created, start, stub,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def github(stub, configure):
    configure(social_providers={"github": {
        "clientId": "gh-client", "clientSecret": "gh-secret",
        "authorizationEndpoint": f"{stub.url}/login/oauth/authorize",
        "tokenEndpoint": f"{stub.url}/login/oauth/access_token",
        "userInfoEndpoint": f"{stub.url}/user", "emailsEndpoint": f"{stub.url}/user/emails"}})
    stub.routes[("POST", "/login/oauth/access_token")] = (200, {
        "access_token": "gho_16C7e42F292c6912E7710c838347Ae178B4a", "scope": "read:user,user:email",
        "token_type": "bearer"})
    stub.routes[("GET", "/user")] = (200, {"login": "octocat", "id": 583231, "name": "The Octocat",
                                           "email": None, "avatar_url": "https://github.com/images/octo.gif"})
    stub.routes[("GET", "/user/emails")] = (200, [
        {"email": "octo@old.example", "verified": False, "primary": False, "visibility": None},
        {"email": "octocat@github.com", "verified": True, "primary": True, "visibility": "public"}])
    return stub


def test_github_authorize_url_has_its_default_scopes_and_pkce(api, github):
    _, query = start(api, "github")
    assert query["scope"] == "read:user user:email" and query["client_id"] == "gh-client"
    assert query["code_challenge_method"] == "S256" and "nonce" not in query


def test_github_sign_in_uses_the_primary_verified_email(api, github):
    _, query = start(api, "github", callbackURL="/home")
    response = callback(api, "github", code="gh-code", state=query["state"])
    assert response["Location"] == "/home"
    user = get_user_model().objects.get()
    assert (user.email, users.is_email_verified(user), users.name_of(user)) == ("octocat@github.com", True, "The Octocat")
    account = Account.objects.get(provider_id="github")
    assert account.account_id == "583231" and account.scope == "read:user,user:email"
    token_call = github.calls("/login/oauth/access_token")[0]
    assert token_call.form["client_id"] == "gh-client" and token_call.form["client_secret"] == "gh-secret"
    assert github.calls("/user")[0].headers["authorization"] == f"Bearer {account.access_token}"


def test_github_error_in_a_200_token_answer_is_invalid_code(api, github):
    github.routes[("POST", "/login/oauth/access_token")] = (200, {
        "error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."})
    _, query = start(api, "github", errorCallbackURL="/oops")
    assert error_location(callback(api, "github", code="x", state=query["state"])) == "/oops?error=invalid_code"
    assert nothing_created()


def test_github_user_api_failure_is_unable_to_get_user_info(api, github):
    github.routes[("GET", "/user")] = (401, {"message": "Bad credentials"})
    _, query = start(api, "github", errorCallbackURL="/oops")
    response = callback(api, "github", code="x", state=query["state"])
    assert error_location(response) == "/oops?error=unable_to_get_user_info"
    assert nothing_created()


# --- Apple ----------------------------------------------------------------------------------------
APPLE_ISSUER = "https://appleid.apple.com"


@pytest.fixture
def apple(stub, configure):
    key = keys.RsaKey("apple-1")
    stub.apple_key = key
    stub.apple_token = None
    configure(social_providers={"apple": {
        "clientId": "com.example.web", "clientSecret": "eyJ.client-secret-jwt.as-given",
        "authorizationEndpoint": f"{stub.url}/auth/authorize", "tokenEndpoint": f"{stub.url}/auth/token",
        "jwksUri": f"{stub.url}/auth/keys"}})
    stub.routes[("GET", "/auth/keys")] = (200, {"keys": [key.jwk()]})
    stub.routes[("POST", "/auth/token")] = lambda seen: (200, {
        "access_token": "apple-at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "apple-rt",
        "id_token": stub.apple_token})
    return stub


def apple_token(stub, nonce, **extra):
    claims = keys.claims(APPLE_ISSUER, "com.example.web", sub="001234.apple.sub", nonce=nonce,
                         email="ada@privaterelay.appleid.com", email_verified="true", **extra)
    return stub.apple_key.sign(claims)


def test_apple_authorize_url_asks_for_form_post(api, apple):
    _, query = start(api, "apple")
    assert query["response_mode"] == "form_post" and query["response_type"] == "code id_token"
    assert query["scope"] == "email name" and query["nonce"]


def test_apple_form_post_bounces_to_get_and_signs_in(api, apple):
    _, query = start(api, "apple", callbackURL="/home")
    apple.apple_token = apple_token(apple, query["nonce"])
    # Apple's cross-site form post carries no Lax cookie; the GET it is bounced to does.
    form = urlencode({"code": "apple-code", "state": query["state"],
                      "user": json.dumps({"name": {"firstName": "Ada", "lastName": "Lovelace"}})})
    posted = Client().post("/api/auth/callback/apple", form, content_type="application/x-www-form-urlencoded",
                           HTTP_ORIGIN=APPLE_ISSUER)
    assert posted.status_code == 302
    assert posted["Location"].startswith(f"{ORIGIN}/api/auth/callback/apple?")
    response = api.get(posted["Location"])
    assert response["Location"] == "/home"
    user = get_user_model().objects.get()
    assert (user.email, users.is_email_verified(user), users.name_of(user)) == ("ada@privaterelay.appleid.com", True, "Ada Lovelace")
    assert apple.calls("/auth/token")[0].form["client_secret"] == "eyJ.client-secret-jwt.as-given"


def test_apple_accepts_the_hashed_nonce(api, apple):
    _, query = start(api, "apple", callbackURL="/home")
    apple.apple_token = apple_token(apple, hashlib.sha256(query["nonce"].encode()).hexdigest())
    assert callback(api, "apple", code="c", state=query["state"])["Location"] == "/home"


def test_apple_token_from_another_issuer_is_refused(api, apple):
    _, query = start(api, "apple", errorCallbackURL="/oops")
    apple.apple_token = apple.apple_key.sign(keys.claims("https://evil.example", "com.example.web",
                                                         nonce=query["nonce"], email="a@b.co"))
    response = callback(api, "apple", code="c", state=query["state"])
    assert error_location(response) == "/oops?error=unable_to_get_user_info"
    assert nothing_created()


def test_apple_id_token_sign_in_from_a_native_app(api, apple, configure):
    configure(social_providers={"apple": {"appBundleIdentifier": "com.example.ios"}})
    token = apple.apple_key.sign(keys.claims(APPLE_ISSUER, "com.example.ios", sub="001234.apple.sub",
                                             email="ada@example.com", email_verified=True))
    response = api.api_post("/sign-in/social", {"provider": "apple", "idToken": {
        "token": token, "user": {"name": {"firstName": "Ada", "lastName": "L"}}}})
    assert response.status_code == 200, response.content
    assert response.json()["user"]["name"] == "Ada L"
    assert Session.objects.count() == 1


# --- Discord, GitLab, Google, Microsoft -------------------------------------------------------------
def test_discord_profile(api, stub, configure):
    configure(social_providers={"discord": {
        "clientId": "d", "clientSecret": "s", "authorizationEndpoint": f"{stub.url}/authorize",
        "tokenEndpoint": f"{stub.url}/token", "userInfoEndpoint": f"{stub.url}/users/@me"}})
    stub.routes[("POST", "/token")] = (200, {"access_token": "d-at", "token_type": "Bearer",
                                             "scope": "identify email"})
    stub.routes[("GET", "/users/@me")] = (200, {"id": "80351110224678912", "username": "nelly",
                                                "global_name": "Nelly", "discriminator": "0", "avatar": None,
                                                "email": "nelly@discord.com", "verified": True})
    _, query = start(api, "discord")
    assert query["scope"] == "identify email"
    assert "error" not in callback(api, "discord", code="c", state=query["state"])["Location"]
    user = get_user_model().objects.get()
    assert (users.name_of(user), users.is_email_verified(user)) == ("Nelly", True)
    assert users.image_of(user).startswith("https://cdn.discordapp.com/embed/avatars/")


def test_self_hosted_gitlab_profile(api, stub, configure):
    configure(social_providers={"gitlab": {"clientId": "g", "clientSecret": "s", "issuer": stub.url}})
    stub.routes[("POST", "/oauth/token")] = (200, {"access_token": "g-at", "token_type": "Bearer",
                                                   "scope": "read_user"})
    stub.routes[("GET", "/api/v4/user")] = (200, {"id": 42, "username": "jdoe", "name": "J Doe",
                                                  "email": "jdoe@example.com", "avatar_url": None})
    response, query = start(api, "gitlab")
    assert response.json()["url"].startswith(f"{stub.url}/oauth/authorize?")
    assert "error" not in callback(api, "gitlab", code="c", state=query["state"])["Location"]
    assert Account.objects.get(provider_id="gitlab").account_id == "42"
    assert users.is_email_verified(get_user_model().objects.get()) is False


def test_google_sign_in_verifies_its_id_token(api, stub, configure):
    key = keys.RsaKey("g-1")
    configure(social_providers={"google": {
        "clientId": "g.apps.googleusercontent.com", "clientSecret": "s", "accessType": "offline",
        "tokenEndpoint": f"{stub.url}/token", "jwksUri": f"{stub.url}/certs"}})
    stub.routes[("GET", "/certs")] = (200, {"keys": [key.jwk()]})
    response, query = start(api, "google")
    assert response.json()["url"].startswith("https://accounts.google.com/o/oauth2/v2/auth?")
    assert query["access_type"] == "offline" and query["include_granted_scopes"] == "true"
    token = key.sign(keys.claims("accounts.google.com", "g.apps.googleusercontent.com", sub="1097",
                                 nonce=query["nonce"], email="ada@gmail.com", email_verified=True))
    stub.routes[("POST", "/token")] = (200, {"access_token": "ya29", "id_token": token, "expires_in": 3599})
    assert "error" not in callback(api, "google", code="c", state=query["state"])["Location"]
    assert Account.objects.get(provider_id="google").account_id == "1097"


def test_microsoft_multi_tenant_token_must_name_its_own_tenant(api, stub, configure):
    key = keys.RsaKey("m-1")
    configure(social_providers={"microsoft": {
        "clientId": "ms-app", "clientSecret": "s", "tokenEndpoint": f"{stub.url}/token",
        "jwksUri": f"{stub.url}/keys"}})
    stub.routes[("GET", "/keys")] = (200, {"keys": [key.jwk()]})
    tid = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    good = f"https://login.microsoftonline.com/{tid}/v2.0"
    for issuer, expected_ok in (("https://login.microsoftonline.com/other/v2.0", False), (good, True)):
        api.cookies.clear()
        _, query = start(api, "microsoft", errorCallbackURL="/oops")
        token = key.sign(keys.claims(issuer, "ms-app", sub="s", nonce=query["nonce"], tid=tid, oid="oid-1",
                                     email="ada@contoso.com"))
        stub.routes[("POST", "/token")] = (200, {"access_token": "m", "id_token": token})
        location = callback(api, "microsoft", code="c", state=query["state"])["Location"]
        assert ("error" not in location) is expected_ok, location
    assert Account.objects.get(provider_id="microsoft").account_id == "oid-1"
