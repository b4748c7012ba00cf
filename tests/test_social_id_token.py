"""ID-token verification (core.md §5.3 step 10), account linking (§5.4), POST /link-social (§4.19)
and the idToken sign-in (§5.1), against a stub OpenID provider serving tokens we sign ourselves."""

import base64
import hashlib
import hmac
import json

import pytest

from authservice import signals, users
from authservice.models import Account, Session
from tests.conftest import error_of
from tests.peers import keys
from tests.peers.social import (  # noqa: F401 - fixtures
    CLIENT_ID, _stub_server, callback, corp, error_location, nothing_created, sign_in_with_corp, start,
    stub,
)

pytestmark = pytest.mark.django_db


def finish_with_token(api, corp, make_token):
    """Run the flow; ``make_token(nonce)`` returns the id_token the token endpoint hands out."""
    _, query = start(api, errorCallbackURL="/oops")
    corp.id_token = make_token(query["nonce"])
    return callback(api, code="c", state=query["state"])


def assert_refused(response):
    assert error_location(response) == "/oops?error=unable_to_get_user_info"
    assert nothing_created()


# --- verification failures -------------------------------------------------------------------------
def test_token_signed_with_another_key_is_refused(api, corp):
    intruder = keys.RsaKey("key-1")  # same kid, different key
    assert_refused(finish_with_token(api, corp, lambda n: intruder.sign(corp.claims(n))))


def test_wrong_audience_is_refused(api, corp):
    assert_refused(finish_with_token(
        api, corp, lambda n: corp.key.sign({**corp.claims(n), "aud": "someone-else"})))


def test_expired_token_is_refused(api, corp):
    assert_refused(finish_with_token(api, corp, lambda n: corp.key.sign(corp.claims(n, lifetime=-300))))


def test_nonce_mismatch_is_refused(api, corp):
    assert_refused(finish_with_token(api, corp, lambda n: corp.key.sign(corp.claims("not-the-nonce"))))


def test_missing_nonce_is_refused(api, corp):
    assert_refused(finish_with_token(api, corp, lambda n: corp.key.sign(corp.claims(None))))


def test_alg_none_is_refused(api, corp):
    assert_refused(finish_with_token(api, corp, lambda n: keys.unsigned(corp.claims(n))))


def test_hmac_signed_with_the_public_key_is_refused(api, corp):
    def forge(nonce):
        public_jwk = json.dumps(corp.key.jwk()).encode()
        header = {"alg": "HS256", "kid": "key-1", "typ": "JWT"}

        def part(data):
            return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

        signing_input = f"{part(header)}.{part(corp.claims(nonce))}"
        mac = hmac.new(public_jwk, signing_input.encode(), hashlib.sha256).digest()
        return signing_input + "." + base64.urlsafe_b64encode(mac).decode().rstrip("=")

    assert_refused(finish_with_token(api, corp, forge))


def test_wrong_issuer_in_the_token_is_refused(api, corp):
    assert_refused(finish_with_token(
        api, corp, lambda n: corp.key.sign({**corp.claims(n), "iss": "https://evil.example"})))


def test_foreign_authorized_party_is_refused(api, corp):
    assert_refused(finish_with_token(
        api, corp, lambda n: corp.key.sign({**corp.claims(n), "aud": [CLIENT_ID, "other"], "azp": "other"})))


def test_several_audiences_without_azp_are_refused(api, corp):
    assert_refused(finish_with_token(
        api, corp, lambda n: corp.key.sign({**corp.claims(n), "aud": [CLIENT_ID, "other"]})))


def test_token_endpoint_without_id_token_is_refused(api, corp):
    corp.token_extra = {"id_token": None}
    _, query = start(api, errorCallbackURL="/oops")
    assert_refused(callback(api, code="c", state=query["state"]))


def test_rotated_key_is_found_with_one_jwks_refetch(api, corp, stub):
    sign_in_with_corp(api, corp)  # caches the JWKS with key-1
    api.cookies.clear()
    rotated = keys.EcKey("key-2")
    corp.key, corp.jwks = rotated, [rotated.jwk()]
    response = sign_in_with_corp(api, corp)
    assert "error" not in response["Location"]
    assert len(stub.calls("/jwks")) == 2


def test_unknown_kid_refetches_only_once(api, corp, stub):
    sign_in_with_corp(api, corp)
    api.cookies.clear()
    response = finish_with_token(api, corp, lambda n: keys.RsaKey("key-9").sign(corp.claims(n)))
    assert error_location(response) == "/oops?error=unable_to_get_user_info"
    assert len(stub.calls("/jwks")) == 2


# --- linking by e-mail (core.md §5.4) ----------------------------------------------------------------
def test_verified_local_user_and_provider_verified_email_are_linked(api, corp, make_user):
    local = make_user(email="ada@example.com", email_verified=True)
    linked = []
    signals.account_linked.connect(lambda **kw: linked.append(kw["provider"]), weak=False,
                                   dispatch_uid="t-linked")
    try:
        response = sign_in_with_corp(api, corp, sub="sub-ada")
    finally:
        signals.account_linked.disconnect(dispatch_uid="t-linked")
    assert response["Location"] == "/dashboard"
    assert Account.objects.get(provider_id="corp").user == local and linked == ["corp"]
    assert Session.objects.get().user == local


def test_unverified_local_user_is_not_linked(api, corp, make_user):
    make_user(email="ada@example.com")
    response = sign_in_with_corp(api, corp)
    assert error_location(response) == "http://127.0.0.1:8000/api/auth/error?error=account_not_linked"
    assert not Account.objects.filter(provider_id="corp").exists() and not Session.objects.exists()


def test_unverified_provider_email_is_not_linked(api, corp, make_user):
    make_user(email="ada@example.com", email_verified=True)
    response = sign_in_with_corp(api, corp, email_verified=False)
    assert response["Location"].endswith("?error=account_not_linked")
    assert not Session.objects.exists()


def test_trusted_provider_links_an_unverified_provider_email(api, corp, make_user, configure):
    configure(account_linking={"trusted_providers": ["corp"]})
    local = make_user(email="ada@example.com", email_verified=True)
    response = sign_in_with_corp(api, corp, email_verified=False)
    assert response["Location"] == "/dashboard"
    assert Account.objects.get(provider_id="corp").user == local


def test_unverified_local_user_links_when_local_verification_is_not_required(api, corp, make_user,
                                                                              configure):
    configure(account_linking={"require_local_email_verified": False})
    local = make_user(email="ada@example.com")
    assert sign_in_with_corp(api, corp)["Location"] == "/dashboard"
    local.refresh_from_db()
    assert users.is_email_verified(local) is True  # the provider vouched for the same address


def test_linking_disabled_refuses(api, corp, make_user, configure):
    configure(account_linking={"enabled": False})
    make_user(email="ada@example.com", email_verified=True)
    assert sign_in_with_corp(api, corp)["Location"].endswith("?error=account_not_linked")


def test_sign_up_disabled_for_the_provider(api, corp, configure, stub):
    configure(social_providers={"corp": {"disableSignUp": True}})
    assert sign_in_with_corp(api, corp)["Location"].endswith("?error=signup_disabled")
    assert nothing_created()


# --- POST /link-social ----------------------------------------------------------------------------
def test_link_social_links_the_provider_account_to_the_caller(signed_in, corp):
    response = signed_in.api_post("/link-social", {"provider": "corp", "callbackURL": "/settings"})
    assert response.status_code == 200 and response.json()["redirect"] is True
    state = response.json()["url"].split("state=")[1].split("&")[0]
    nonce = response.json()["url"].split("nonce=")[1].split("&")[0]
    corp.token_claims = corp.claims(nonce, sub="sub-linked", email=signed_in.user.email)
    sessions_before = Session.objects.count()
    result = callback(signed_in, code="c", state=state)
    assert result["Location"] == "/settings"
    account = Account.objects.get(provider_id="corp")
    assert account.user == signed_in.user and account.scope == "openid,email,profile"
    assert Session.objects.count() == sessions_before


def test_link_social_with_another_email_is_refused(signed_in, corp):
    response = signed_in.api_post("/link-social", {"provider": "corp", "errorCallbackURL": "/oops"})
    url = response.json()["url"]
    state, nonce = url.split("state=")[1].split("&")[0], url.split("nonce=")[1].split("&")[0]
    corp.token_claims = corp.claims(nonce, email="other@example.com")
    assert error_location(callback(signed_in, code="c", state=state)) == "/oops?error=email_does_not_match"
    assert not Account.objects.filter(provider_id="corp").exists()


def test_link_social_needs_a_session(api, corp):
    response = api.api_post("/link-social", {"provider": "corp"})
    assert response.status_code == 401 and error_of(response)["code"] == "UNAUTHORIZED"


# --- idToken sign-in (core.md §5.1) ---------------------------------------------------------------
def test_id_token_sign_in_creates_the_user_and_a_session(api, corp):
    token = corp.key.sign(corp.claims("n-1", sub="native-1"))
    response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token, "nonce": "n-1"}})
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"redirect", "token", "user"} and body["redirect"] is False
    assert body["user"]["email"] == "ada@example.com"
    assert Account.objects.get(provider_id="corp").account_id == "native-1"
    assert response.cookies["auth.session_token"].value.startswith(body["token"] + ".")


def test_id_token_with_a_bad_signature_is_invalid_token(api, corp):
    token = keys.RsaKey("key-1").sign(corp.claims(None))
    response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token}})
    assert response.status_code == 401 and error_of(response)["code"] == "INVALID_TOKEN"
    assert nothing_created()


def test_id_token_with_another_nonce_is_invalid_token(api, corp):
    token = corp.key.sign(corp.claims("n-1"))
    response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token, "nonce": "n-2"}})
    assert response.status_code == 401 and error_of(response)["code"] == "INVALID_TOKEN"


def test_id_token_of_an_unverified_link_is_oauth_link_error(api, corp, make_user):
    make_user(email="ada@example.com")
    token = corp.key.sign(corp.claims(None))
    response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token}})
    assert response.status_code == 401
    assert error_of(response) == {"code": "OAUTH_LINK_ERROR", "message": "account not linked", "status": 401}


def test_id_token_without_email_is_user_email_not_found(api, corp):
    token = corp.key.sign(corp.claims(None, email=None))
    response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token}})
    assert response.status_code == 401 and error_of(response)["code"] == "USER_EMAIL_NOT_FOUND"


def test_id_token_is_not_supported_by_plain_oauth_providers(api, corp, configure):
    configure(social_providers={"github": {"clientId": "gh", "clientSecret": "s"}})
    response = api.api_post("/sign-in/social", {"provider": "github", "idToken": {"token": "x"}})
    assert response.status_code == 404 and error_of(response)["code"] == "ID_TOKEN_NOT_SUPPORTED"


def test_id_token_field_is_validated(api, corp):
    response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"nonce": 1}})
    assert response.status_code == 400
    assert error_of(response)["message"] == (
        "[body.idToken.token] Invalid input: expected string, received undefined; "
        "[body.idToken.nonce] Invalid input: expected string, received number")
