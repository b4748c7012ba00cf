"""private_key_jwt client authentication at the token endpoint, against a real OpenID provider
(npm oidc-provider, which checks the client assertion with the public key it was given) (sso.md §3
step 6, sso/oidc/client_assertion.py)."""

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth import get_user_model

from authservice.models import Session
from sso.oidc import client_assertion
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import JWT_CLIENT_KEY_ID, callback_path, jwt_client_key, op_login
from tests.sso.test_oidc_callback import query_of, start

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

RESOLVED = {}


def resolve_private_key(provider):
    """The resolver named in the settings by these tests: answers what RESOLVED holds."""
    return RESOLVED.get(provider.provider_id)


@pytest.fixture
def acme_jwt(trusted_op, make_provider, configure_sso):
    configure_sso(resolve_private_key="tests.sso.test_private_key_jwt.resolve_private_key")
    RESOLVED.clear()
    config = trusted_op.oidc_config("acme-jwt", clientSecret=None, tokenEndpointAuthentication="private_key_jwt",
                                    privateKeyId=JWT_CLIENT_KEY_ID)
    yield make_provider("acme-jwt", trusted_op.issuer, config)
    RESOLVED.clear()


def sign_in(api):
    location = op_login(start(api, providerId="acme-jwt"), "ada@acme.com")
    path, query = callback_path(location)
    return api.get(path, query)


def other_key():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def test_the_resolved_key_authenticates_the_client_and_the_user_signs_in(api, acme_jwt):
    RESOLVED["acme-jwt"] = (None, jwt_client_key(), None)
    response = sign_in(api)
    assert response.status_code == 302 and response["Location"] == "/dashboard", response.get("Location")
    assert Session.objects.filter(user__email="ada@acme.com").exists()


def test_a_key_in_default_sso_is_used_without_a_resolver(api, acme_jwt, configure_sso):
    configure_sso(resolve_private_key=None, default_sso=[
        {"providerId": "acme-jwt", "oidcConfig": {"privateKey": jwt_client_key()}}])
    assert sign_in(api)["Location"] == "/dashboard"


def test_an_assertion_signed_by_another_key_is_refused_by_the_idp(api, acme_jwt):
    RESOLVED["acme-jwt"] = (None, other_key(), None)
    response = sign_in(api)
    assert query_of(response)["error"] == "invalid_provider"
    assert not get_user_model().objects.filter(email="ada@acme.com").exists()
    assert not Session.objects.exists()


def test_without_a_key_the_callback_fails_before_calling_the_token_endpoint(api, acme_jwt, trusted_op):
    response = sign_in(api)
    assert query_of(response) == {"error": "invalid_provider", "error_description": "no_private_key_available"}
    assert not Session.objects.exists()


def test_an_unusable_key_is_an_error_redirect_not_a_500(api, acme_jwt):
    RESOLVED["acme-jwt"] = (None, "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n", None)
    assert query_of(sign_in(api))["error_description"] == "invalid_private_key"


def test_the_assertion_names_the_client_the_token_endpoint_and_the_key(acme_jwt):
    RESOLVED["acme-jwt"] = (None, jwt_client_key(), None)
    fields = client_assertion.form_fields(acme_jwt, acme_jwt.oidc_config, "acme-jwt-client", "https://op/token")
    assert fields["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    public = serialization.load_pem_private_key(jwt_client_key().encode(), None).public_key()
    claims = jwt.decode(fields["client_assertion"], public, algorithms=["RS256"], audience="https://op/token")
    assert claims["iss"] == claims["sub"] == "acme-jwt-client"
    assert claims["exp"] - claims["iat"] == 60 and len(claims["jti"]) == 32
    assert jwt.get_unverified_header(fields["client_assertion"])["kid"] == JWT_CLIENT_KEY_ID


def test_a_symmetric_algorithm_is_refused(acme_jwt):
    RESOLVED["acme-jwt"] = (None, "a shared secret", "HS256")
    with pytest.raises(client_assertion.KeyUnavailable):
        client_assertion.form_fields(acme_jwt, acme_jwt.oidc_config, "acme-jwt-client", "https://op/token")
