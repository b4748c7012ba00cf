"""ID tokens a real provider never issues, from a stub token endpoint on loopback (sso.md §3 step 7, §10).

Every refused token ends in an error redirect with no user, no account and no session.
"""

import hashlib
import hmac
import json
import time
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account, Session
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import _private_key, authorize_params, public_jwk

pytestmark = pytest.mark.django_db

NOT_VERIFIED = {"error": "invalid_provider", "error_description": "token_not_verified"}


@pytest.fixture
def stub(stub_idp, make_provider):
    make_provider("stub", stub_idp.issuer, stub_idp.oidc_config())
    return stub_idp


def begin(api, provider_id="stub"):
    response = api.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": "/dashboard",
                                             "errorCallbackURL": "/oops"})
    assert response.status_code == 200, response.content
    params = authorize_params(response.json()["url"])
    return params["state"], params["nonce"]


def finish(api, state, provider_id="stub"):
    return api.get(f"/api/auth/sso/callback/{provider_id}", {"code": "stub-code", "state": state})


def outcome(response):
    assert response.status_code == 302
    return {key: values[-1] for key, values in parse_qs(urlsplit(response["Location"]).query).items()}


def assert_nobody_signed_in(api):
    assert not get_user_model().objects.filter(email="eve@acme.com").exists()
    assert not Account.objects.filter(provider_id="stub").exists()
    assert not Session.objects.exists()
    assert "auth.session_token" not in api.cookies


def test_a_well_formed_token_signs_in(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce))
    response = finish(api, state)
    assert response["Location"] == "/dashboard"
    assert Account.objects.get(provider_id="stub").account_id == "stub-user-1"


def test_the_token_request_carries_the_code_verifier_and_redirect_uri(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce))
    finish(api, state)
    headers, body = stub.token_requests[-1]
    form = parse_qs(body)
    assert form["grant_type"] == ["authorization_code"]
    assert form["redirect_uri"] == ["http://127.0.0.1:8000/api/auth/sso/callback/stub"]
    assert len(form["code_verifier"][0]) == 128
    assert "client_secret" not in form
    assert headers["Authorization"].startswith("Basic ")


def test_a_nonce_mismatch_is_refused(api, stub):
    state, _ = begin(api)
    stub.id_token = stub.sign(stub.claims("another-nonce"))
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_a_token_without_nonce_is_refused(api, stub):
    state, _ = begin(api)
    stub.id_token = stub.sign(stub.claims(None))
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_a_token_for_another_audience_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce, aud="someone-else"))
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_several_audiences_without_azp_are_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce, aud=["stub-client", "other"]))
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_an_azp_naming_another_client_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce, aud=["stub-client", "other"], azp="other"))
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_several_audiences_with_our_azp_are_accepted(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce, aud=["stub-client", "other"], azp="stub-client"))
    assert finish(api, state)["Location"] == "/dashboard"


def test_a_token_from_another_issuer_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce, iss="https://evil.example"))
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_an_expired_token_is_refused(api, stub):
    state, nonce = begin(api)
    now = int(time.time())
    stub.id_token = stub.sign(stub.claims(nonce, iat=now - 3600, exp=now - 600))
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_a_token_not_yet_valid_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce, nbf=int(time.time()) + 3600))
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_a_token_signed_by_another_key_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce), key=_private_key())  # same kid, foreign key
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_alg_none_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = jwt.encode(stub.claims(nonce), None, algorithm="none", headers={"kid": stub.kid})
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_hs256_keyed_with_the_providers_public_key_is_refused(api, stub):
    state, nonce = begin(api)
    header = jwt.utils.base64url_encode(b'{"alg":"HS256","typ":"JWT","kid":"stub-1"}')
    payload = jwt.utils.base64url_encode(json.dumps(stub.claims(nonce)).encode())
    signing_input = header + b"." + payload
    signature = hmac.new(stub.public_pem(), signing_input, hashlib.sha256).digest()
    stub.id_token = (signing_input + b"." + jwt.utils.base64url_encode(signature)).decode()
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_hs256_keyed_with_the_client_secret_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = jwt.encode(stub.claims(nonce), "stub-secret-padded-to-32-bytes!!", algorithm="HS256",
                               headers={"kid": stub.kid})
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert_nobody_signed_in(api)


def test_a_token_without_subject_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce, sub=None))
    assert outcome(finish(api, state)) == {"error": "invalid_provider",
                                           "error_description": "id_token_subject_missing"}
    assert_nobody_signed_in(api)


def test_the_jwks_is_cached_per_provider(api, stub):
    for _ in range(2):
        state, nonce = begin(api)
        stub.id_token = stub.sign(stub.claims(nonce))
        assert finish(api, state)["Location"] == "/dashboard"
    assert stub.hits.count("/jwks") == 1


def test_an_unknown_kid_refetches_the_jwks_once(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce))
    finish(api, state)
    rotated = _private_key()
    stub.jwks = [public_jwk(rotated, "stub-2")]
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce), key=rotated, kid="stub-2")
    assert finish(api, state)["Location"] == "/dashboard"
    assert stub.hits.count("/jwks") == 2


def test_a_kid_missing_after_the_refetch_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce), kid="nobody")
    assert outcome(finish(api, state)) == NOT_VERIFIED
    assert stub.hits.count("/jwks") == 2
    assert_nobody_signed_in(api)


def test_the_idps_token_error_description_is_passed_on(api, stub):
    state, _ = begin(api)
    stub.token_status, stub.token_body = 400, {"error": "invalid_grant", "error_description": "code expired"}
    assert outcome(finish(api, state)) == {"error": "invalid_provider", "error_description": "code expired"}
    assert_nobody_signed_in(api)


def test_a_token_error_without_description_is_token_response_error(api, stub):
    state, _ = begin(api)
    stub.token_status, stub.token_body = 500, {"error": "server_error"}
    assert outcome(finish(api, state)) == {"error": "invalid_provider", "error_description": "token_response_error"}


def test_userinfo_for_another_subject_is_refused(api, stub_idp, make_provider):
    make_provider("stub", stub_idp.issuer, stub_idp.oidc_config(userInfoEndpoint=f"{stub_idp.url}/userinfo"))
    stub_idp.userinfo = {"sub": "someone-else", "email": "eve@acme.com"}
    state, nonce = begin(api)
    stub_idp.id_token = stub_idp.sign(stub_idp.claims(nonce))
    assert outcome(finish(api, state)) == {"error": "invalid_provider",
                                           "error_description": "id_token_userinfo_subject_mismatch"}
    assert_nobody_signed_in(api)


def test_an_untrusted_loopback_token_endpoint_is_never_called(api, stub_idp, make_provider, configure):
    make_provider("stub", stub_idp.issuer, stub_idp.oidc_config())
    state, nonce = begin(api)
    configure(trusted_origins=[])
    stub_idp.id_token = stub_idp.sign(stub_idp.claims(nonce))
    assert outcome(finish(api, state))["error"] == "discovery_private_host"
    assert "/token" not in stub_idp.hits
    assert_nobody_signed_in(api)


def test_an_issuer_mixup_in_the_authorization_response_is_refused(api, stub):
    state, nonce = begin(api)
    stub.id_token = stub.sign(stub.claims(nonce))
    response = api.get("/api/auth/sso/callback/stub", {"code": "c", "state": state, "iss": "https://evil.example"})
    assert outcome(response) == {"error": "invalid_provider", "error_description": "issuer_mismatch"}
    assert "/token" not in stub.hits
