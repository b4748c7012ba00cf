"""samlConfig checks at POST /sso/register and /sso/update-provider (sso.md §2): bad certificates, bad
metadata and the algorithm policy are coded 400s, never 500s; and the trust sources they configure work."""

import pytest

from sso.models import SsoProvider
from tests.conftest import ORIGIN, error_of
from tests.sso.saml.conftest import post_acs, session_user, user_for

SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"


def _register(client, cert, **config):
    body = {"providerId": "acme-saml", "issuer": f"{ORIGIN}/saml/acme-saml", "domain": "acme.com",
            "samlConfig": {"entryPoint": "https://idp.acme.com/sso", "cert": cert,
                           "idpMetadata": {"entityID": "https://idp.acme.com/entity"}, **config}}
    body["samlConfig"] = {key: value for key, value in body["samlConfig"].items() if value is not None}
    return client.api_post("/sso/register", body)


def _refused(response, code, status=400):
    assert response.status_code == status, response.content
    assert error_of(response)["code"] == code
    assert not SsoProvider.objects.exists()


@pytest.fixture
def cert(saml_keys):
    return saml_keys["idp"].cert


def test_a_deprecated_signature_algorithm_is_accepted_with_a_warning_by_default(saml_owner, cert):
    assert _register(saml_owner, cert, signatureAlgorithm=SHA1).status_code == 200


def test_a_deprecated_signature_algorithm_is_refused_with_on_deprecated_reject(saml_owner, cert, configure_sso):
    configure_sso(saml={"algorithms": {"on_deprecated": "reject"}})
    _refused(_register(saml_owner, cert, signatureAlgorithm=SHA1), "SAML_DEPRECATED_CONFIG_ALGORITHM")


def test_a_deprecated_short_digest_name_is_refused_too(saml_owner, cert, configure_sso):
    configure_sso(saml={"algorithms": {"on_deprecated": "reject"}})
    _refused(_register(saml_owner, cert, digestAlgorithm="sha1"), "SAML_DEPRECATED_CONFIG_ALGORITHM")


def test_an_unknown_algorithm_is_refused(saml_owner, cert):
    _refused(_register(saml_owner, cert, signatureAlgorithm="urn:made-up:rsa-md4"), "SAML_UNKNOWN_ALGORITHM")


def test_an_algorithm_outside_the_allow_list_is_refused(saml_owner, cert, configure_sso):
    configure_sso(saml={"algorithms": {"allowed_signature_algorithms": [
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"]}})
    _refused(_register(saml_owner, cert, signatureAlgorithm="sha256"), "SAML_ALGORITHM_NOT_ALLOWED")


def test_a_certificate_that_is_not_pem_is_refused(saml_owner):
    _refused(_register(saml_owner, "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----"),
             "SAML_INVALID_CERTIFICATE")


def test_no_certificate_and_no_metadata_is_cert_source_missing(saml_owner):
    _refused(_register(saml_owner, None), "CERT_SOURCE_MISSING")


@pytest.mark.parametrize("metadata", [
    "not xml at all",
    '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
    '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>',
])
def test_idp_metadata_that_is_not_idp_metadata_is_refused(saml_owner, metadata):
    _refused(_register(saml_owner, None, idpMetadata={"metadata": metadata}), "SAML_CONFIG_INVALID")


def test_sp_metadata_that_does_not_parse_is_refused(saml_owner, cert):
    _refused(_register(saml_owner, cert, spMetadata={"metadata": "<broken"}), "SAML_INVALID_SP_METADATA")


def test_sp_metadata_disagreeing_on_want_assertions_signed_is_refused(saml_owner, cert):
    metadata = ('<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="urn:sp">'
                '<md:SPSSODescriptor WantAssertionsSigned="false" '
                'protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>')
    _refused(_register(saml_owner, cert, wantAssertionsSigned=True, spMetadata={"metadata": metadata}),
             "SAML_SP_METADATA_ASSERTION_SIGNATURE_MISMATCH")


def test_oversized_idp_metadata_is_refused(saml_owner, configure_sso):
    configure_sso(saml={"max_metadata_size": 100})
    _refused(_register(saml_owner, None, idpMetadata={"metadata": "<x>" + "a" * 200 + "</x>"}),
             "SAML_METADATA_TOO_LARGE")


def test_update_provider_runs_the_algorithm_checks_again(saml_owner, cert, configure_sso):
    assert _register(saml_owner, cert).status_code == 200
    configure_sso(saml={"algorithms": {"on_deprecated": "reject"}})
    response = saml_owner.api_post("/sso/update-provider", {"providerId": "acme-saml",
                                                            "samlConfig": {"signatureAlgorithm": SHA1}})
    assert response.status_code == 400
    assert error_of(response)["code"] == "SAML_DEPRECATED_CONFIG_ALGORITHM"


# --- the trust sources work end to end ----------------------------------------------------------------
def test_idp_metadata_xml_alone_is_a_working_trust_source(saml_provider, saml_idp, browser):
    provider = saml_provider("acme-md", cert=None, idpMetadata={"metadata": saml_idp.metadata("acme-md")})
    form = provider.idp_response(browser, user_for())
    assert post_acs(browser, "acme-md", form.saml_response, form.relay_state)["Location"] == "/dashboard"
    assert session_user(browser)["email"] == "ada@acme.com"


def test_a_certificate_array_accepts_either_certificate_for_rotation(saml_provider, saml_keys, browser):
    provider = saml_provider("acme-rot", cert=[saml_keys["other_idp"].cert, saml_keys["idp"].cert])
    form = provider.idp_response(browser, user_for())
    assert post_acs(browser, "acme-rot", form.saml_response, form.relay_state)["Location"] == "/dashboard"


def test_a_response_signed_by_a_certificate_not_configured_is_refused(saml_provider, saml_keys, browser):
    provider = saml_provider("acme-rot", cert=[saml_keys["other_idp"].cert])
    form = provider.idp_response(browser, user_for())
    response = post_acs(browser, "acme-rot", form.saml_response, form.relay_state)
    assert "error=saml_error" in response["Location"]
    assert session_user(browser) is None


WS_FED_IDP_METADATA = (  # the shape ADFS and Entra ID publish: a WS-Federation RoleDescriptor, mdui names
    '<EntityDescriptor entityID="https://sts.example.com/tenant/" xmlns="urn:oasis:names:tc:SAML:2.0:metadata">'
    '<RoleDescriptor xsi:type="fed:SecurityTokenServiceType" '
    'protocolSupportEnumeration="http://docs.oasis-open.org/wsfed/federation/200706" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:fed="http://docs.oasis-open.org/wsfed/federation/200706">'
    '<fed:ClaimTypesOffered><auth:ClaimType Uri="http://schemas.xmlsoap.org/claims/name" '
    'xmlns:auth="http://docs.oasis-open.org/wsfed/authorization/200706"><auth:DisplayName>Name</auth:DisplayName>'
    "</auth:ClaimType></fed:ClaimTypesOffered><fed:SecurityTokenServiceEndpoint>"
    '<wsa:EndpointReference xmlns:wsa="http://www.w3.org/2005/08/addressing">'
    "<wsa:Address>https://sts.example.com/tenant/wsfed</wsa:Address></wsa:EndpointReference>"
    "</fed:SecurityTokenServiceEndpoint></RoleDescriptor>"
    '<IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><Extensions>'
    '<mdui:UIInfo xmlns:mdui="urn:oasis:names:tc:SAML:metadata:ui"><mdui:DisplayName xml:lang="en">STS'
    "</mdui:DisplayName></mdui:UIInfo></Extensions>"
    '<SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" '
    'Location="https://sts.example.com/tenant/saml2"/></IDPSSODescriptor></EntityDescriptor>')


def test_idp_metadata_with_ws_federation_and_mdui_content_is_accepted(saml_owner, cert):
    # Foreign namespaces are refused (I3), but these are the SAML family's own and inert XML.
    response = _register(saml_owner, cert, idpMetadata={"metadata": WS_FED_IDP_METADATA})
    assert response.status_code == 200, response.content
