"""I4: every location we store, redirect to or return is http(s) and parses cleanly.

The attack (issue 12, F4): a signed-up user registers a SAML provider whose ``entryPoint`` (or the SSO
location in its IdP metadata, given or fetched) is ``javascript:...``; ``POST /sign-in/sso`` then
answered ``{"url": "javascript:...", "redirect": true}`` and the client navigated to it on the auth
origin. Now every location is checked at registration (400 with a code) and the sign-in URL of both
protocols is checked again right before it is returned (a coded error, never the URL).
"""

import pytest

from sso.models import SsoProvider
from tests.conftest import ORIGIN, error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, pem_cert, sign_in  # noqa: F401 - fixtures
from tests.sso.saml import idp_signer
from tests.sso.saml.test_metadata_fetch import MetadataServer

pytestmark = pytest.mark.django_db

IDP_ENTITY = "https://idp.evil.test/entity"
IDP_SSO = "https://idp.evil.test/sso"
REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata"
ACTIVE = ["javascript:alert(document.domain)//", "JavaScript:alert(1)", "data:text/html,<script>alert(1)</script>",
          "vbscript:msgbox(1)", " javascript:alert(1)"]


def _saml_body(cert, provider_id="evil-saml", **config):
    saml = {"entryPoint": IDP_SSO, "cert": cert, "idpMetadata": {"entityID": IDP_ENTITY}, **config}
    return {"providerId": provider_id, "issuer": f"{ORIGIN}/saml/{provider_id}", "domain": "evil.test",
            "samlConfig": {key: value for key, value in saml.items() if value is not None}}


def _refused(response, *codes):
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] in codes, response.content
    assert not SsoProvider.objects.exists()


def _idp_metadata_xml(sso_location, cert_body="", slo_location=None):
    key = (f'<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#">'
           f"<ds:X509Data><ds:X509Certificate>{cert_body}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>"
           "</md:KeyDescriptor>") if cert_body else ""
    slo = (f'<md:SingleLogoutService Binding="{REDIRECT}" Location="{slo_location}"/>'
           if slo_location else "")
    return (f'<md:EntityDescriptor xmlns:md="{MD_NS}" entityID="{IDP_ENTITY}">'
            '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
            f'{key}{slo}<md:SingleSignOnService Binding="{REDIRECT}" Location="{sso_location}"/>'
            "</md:IDPSSODescriptor></md:EntityDescriptor>")


def _body_of(pem):
    return "".join(line for line in pem.splitlines() if "CERTIFICATE" not in line)


# --- registration ------------------------------------------------------------------------------
@pytest.mark.parametrize("location", ACTIVE)
def test_an_entry_point_that_is_not_http_is_refused(sign_in, pem_cert, location):
    response = sign_in().api_post("/sso/register", _saml_body(pem_cert, entryPoint=location))
    _refused(response, "SAML_URL_INVALID", "VALIDATION_ERROR")


@pytest.mark.parametrize("key", ["singleSignOnService", "singleLogoutService"])
def test_an_idp_service_location_that_is_not_http_is_refused(sign_in, pem_cert, key):
    idp = {"entityID": IDP_ENTITY, key: [{"Binding": REDIRECT, "Location": "javascript:alert(1)"}]}
    response = sign_in().api_post("/sso/register", _saml_body(pem_cert, idpMetadata=idp))
    _refused(response, "SAML_URL_INVALID")


def test_the_sso_location_inside_given_idp_metadata_must_be_http(sign_in, pem_cert):
    metadata = _idp_metadata_xml("javascript:alert(document.domain)", _body_of(pem_cert))
    response = sign_in().api_post("/sso/register", _saml_body(None, idpMetadata={"metadata": metadata}))
    _refused(response, "SAML_URL_INVALID")


def test_a_logout_location_inside_given_idp_metadata_must_be_http(sign_in, pem_cert):
    metadata = _idp_metadata_xml(IDP_SSO, _body_of(pem_cert), slo_location="data:text/html,x")
    response = sign_in().api_post("/sso/register", _saml_body(None, idpMetadata={"metadata": metadata}))
    _refused(response, "SAML_URL_INVALID")


@pytest.mark.parametrize("key", ["callbackUrl", "idpInitiatedCallbackUrl"])
def test_a_saml_callback_url_that_is_not_http_or_a_path_is_refused(sign_in, pem_cert, key):
    response = sign_in().api_post("/sso/register", _saml_body(pem_cert, **{key: "javascript:alert(1)"}))
    _refused(response, "SAML_URL_INVALID")


def test_an_update_cannot_set_a_javascript_entry_point(sign_in, pem_cert):
    client = sign_in()
    assert client.api_post("/sso/register", _saml_body(pem_cert)).status_code == 200
    response = client.api_post("/sso/update-provider", {"providerId": "evil-saml",
                                                        "samlConfig": {"entryPoint": "javascript:alert(1)"}})
    assert response.status_code == 400, response.content
    assert SsoProvider.objects.get().saml_config["entryPoint"] == IDP_SSO


@pytest.mark.parametrize("issuer", ["javascript:alert(1)//idp.evil.test", "data:text/html,x"])
def test_an_oidc_issuer_that_is_not_http_is_refused_also_without_discovery(sign_in, issuer):
    response = sign_in().api_post("/sso/register", skip_discovery_body(issuer=issuer, domain="evil.test"))
    _refused(response, "discovery_invalid_url")


@pytest.fixture
def metadata_server(configure):
    running = MetadataServer()
    configure(trusted_origins=[running.url])  # loopback is refused otherwise (I8), not what is tested here
    yield running
    running.close()


def test_the_sso_location_inside_fetched_idp_metadata_must_be_http(sign_in, metadata_server, tmp_path):
    idp_signer.require_binaries()
    keypair = idp_signer.make_keypair(tmp_path, "idp")
    metadata_server.set("/md", idp_signer.idp_metadata(IDP_ENTITY, "javascript:alert(document.domain)", keypair))
    idp = {"url": f"{metadata_server.url}/md"}
    response = sign_in().api_post("/sso/register", _saml_body(None, idpMetadata=idp))
    _refused(response, "SAML_URL_INVALID")


# --- right before a URL is returned --------------------------------------------------------------
def _stored(make_user, provider_id, **fields):
    """A row as the old build stored it: registration never checked these locations."""
    owner = make_user(email=f"owner-{provider_id}@evil.test")
    return SsoProvider.objects.create(provider_id=provider_id, issuer=f"{ORIGIN}/saml/{provider_id}",
                                      domain="evil.test", user=owner, domain_verified=True, **fields)


def _start(api, provider_id):
    return api.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": "/dashboard"})


@pytest.mark.parametrize("entry_point", ["javascript:alert(document.domain)//", "data:text/html,x"])
def test_sign_in_never_returns_a_stored_javascript_entry_point(api, make_user, pem_cert, entry_point):
    _stored(make_user, "stored-saml", saml_config={"entryPoint": entry_point, "cert": pem_cert,
                                                   "idpMetadata": {"entityID": IDP_ENTITY}})
    response = _start(api, "stored-saml")
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "SSO_SIGN_IN_URL_INVALID"
    assert "javascript" not in response.content.decode().lower()


def test_sign_in_never_returns_a_stored_javascript_sso_location_from_metadata(api, make_user, pem_cert):
    metadata = _idp_metadata_xml("javascript:alert(document.domain)", _body_of(pem_cert))
    _stored(make_user, "stored-md", saml_config={"entryPoint": IDP_SSO, "idpMetadata": {"metadata": metadata}})
    response = _start(api, "stored-md")
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "SSO_SIGN_IN_URL_INVALID"


def test_sign_in_never_returns_a_stored_javascript_authorization_endpoint(api, make_user):
    config = {"issuer": "https://op.evil.test", "clientId": "c", "clientSecret": "s", "pkce": True,
              "authorizationEndpoint": "javascript:alert(document.domain)//",
              "tokenEndpoint": "https://op.evil.test/token", "jwksEndpoint": "https://op.evil.test/jwks",
              "tokenEndpointAuthentication": "client_secret_basic"}
    _stored(make_user, "stored-oidc", oidc_config=config)
    response = _start(api, "stored-oidc")
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "SSO_SIGN_IN_URL_INVALID"
