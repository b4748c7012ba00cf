"""OIDC discovery failures at registration, served by a real HTTP server on loopback (sso.md §4)."""

import time

import pytest

from sso.models import SsoProvider
from tests.conftest import error_of
from tests.sso.bodies import oidc_body

pytestmark = pytest.mark.django_db


def _register(client, body):
    response = client.api_post("/sso/register", body)
    assert not SsoProvider.objects.exists(), "a failed registration stores nothing"
    return response


def test_discovery_404_is_discovery_not_found(sign_in, idp):
    response = _register(sign_in(), oidc_body(idp.url))
    assert response.status_code == 400
    assert error_of(response)["code"] == "discovery_not_found"


def test_wrong_issuer_is_issuer_mismatch(sign_in, idp):
    idp.discovery(issuer="https://evil.example.com")
    response = _register(sign_in(), oidc_body(idp.url))
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "issuer_mismatch"
    assert error["message"] == (f'OIDC issuer mismatch: Discovered issuer "https://evil.example.com" does not '
                                f'match configured issuer "{idp.url}"')


def test_issuer_comparison_ignores_one_trailing_slash(sign_in, idp):
    idp.discovery(issuer=idp.url + "/")
    assert sign_in().api_post("/sso/register", oidc_body(idp.url)).status_code == 200


def test_missing_fields_are_named_in_discovery_incomplete(sign_in, idp):
    idp.discovery(jwks_uri=None, token_endpoint=None)
    response = _register(sign_in(), oidc_body(idp.url))
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "discovery_incomplete"
    assert error["message"].endswith("token_endpoint, jwks_uri")


def test_slow_answer_past_the_timeout_is_discovery_timeout(sign_in, idp, configure_sso):
    configure_sso(discovery_timeout=0.5)
    document = idp.discovery()
    idp.set("/.well-known/openid-configuration", document, delay=2)
    started = time.monotonic()
    response = _register(sign_in(), oidc_body(idp.url))
    assert time.monotonic() - started < 1.9
    assert response.status_code == 502
    assert error_of(response)["code"] == "discovery_timeout"


def test_408_is_discovery_timeout(sign_in, idp):
    idp.set("/.well-known/openid-configuration", {}, status=408)
    response = _register(sign_in(), oidc_body(idp.url))
    assert response.status_code == 502
    assert error_of(response)["code"] == "discovery_timeout"


def test_idp_5xx_is_discovery_unexpected_error(sign_in, idp):
    idp.set("/.well-known/openid-configuration", {}, status=503)
    response = _register(sign_in(), oidc_body(idp.url))
    assert response.status_code == 502
    assert error_of(response)["code"] == "discovery_unexpected_error"


def test_non_json_body_is_discovery_invalid_json(sign_in, idp):
    idp.set("/.well-known/openid-configuration", raw=b"<html>hello</html>")
    response = _register(sign_in(), oidc_body(idp.url))
    assert response.status_code == 400
    assert error_of(response)["code"] == "discovery_invalid_json"


def test_redirect_is_not_followed(sign_in, idp):
    idp.set("/.well-known/openid-configuration", {}, status=302, headers={"Location": "http://10.0.0.1/"})
    response = _register(sign_in(), oidc_body(idp.url))
    assert response.status_code == 400
    assert error_of(response)["code"] == "oidc_endpoint_redirect"


def test_only_unsupported_auth_methods_is_unsupported_token_auth_method(sign_in, idp):
    idp.discovery(token_endpoint_auth_methods_supported=["tls_client_auth"])
    response = _register(sign_in(), oidc_body(idp.url))
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "unsupported_token_auth_method"
    assert error["message"] == "Unsupported token endpoint authentication method: tls_client_auth"


def test_explicit_auth_method_the_idp_does_not_offer_is_unsupported(sign_in, idp):
    idp.discovery(token_endpoint_auth_methods_supported=["client_secret_basic"])
    body = oidc_body(idp.url, oidc={"tokenEndpointAuthentication": "client_secret_post"})
    response = _register(sign_in(), body)
    assert error_of(response)["code"] == "unsupported_token_auth_method"


def test_untrusted_origin_is_refused_before_any_request(sign_in, untrusted_idp):
    untrusted_idp.discovery()
    response = _register(sign_in(), oidc_body(untrusted_idp.url))
    assert response.status_code == 400
    assert error_of(response)["code"] == "discovery_untrusted_origin"
    assert untrusted_idp.requests == []


def test_explicit_loopback_discovery_endpoint_is_a_private_host(sign_in, idp, untrusted_idp):
    untrusted_idp.discovery(issuer=idp.url)
    body = oidc_body(idp.url, oidc={"discoveryEndpoint": f"{untrusted_idp.url}/.well-known/openid-configuration"})
    response = _register(sign_in(), body)
    assert error_of(response)["code"] == "discovery_private_host"
    assert untrusted_idp.requests == []


def test_explicit_public_discovery_endpoint_must_be_trusted(sign_in, idp):
    body = oidc_body(idp.url, oidc={"discoveryEndpoint": "https://idp.elsewhere.example/.well-known/x"})
    response = _register(sign_in(), body)
    assert error_of(response)["code"] == "discovery_untrusted_origin"


def test_discovered_endpoint_on_an_untrusted_origin_is_refused(sign_in, idp):
    idp.discovery(token_endpoint="https://elsewhere.example.net/token")
    response = _register(sign_in(), oidc_body(idp.url))
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "discovery_untrusted_origin"
    assert "token_endpoint" in error["message"]


def test_unreachable_idp_is_discovery_unexpected_error(sign_in, configure):
    configure(trusted_origins=["http://127.0.0.1:9"])
    response = _register(sign_in(), oidc_body("http://127.0.0.1:9"))
    assert response.status_code == 502
    assert error_of(response)["code"] == "discovery_unexpected_error"
