"""GET /sso/saml2/sp/metadata (sso.md §5): the SP metadata an IdP is configured from."""

from defusedxml import ElementTree
from saml2.xml.schema import validate

from tests.conftest import BASE, ORIGIN, error_of

MD = "{urn:oasis:names:tc:SAML:2.0:metadata}"
DS = "{http://www.w3.org/2000/09/xmldsig#}"
POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"


def _metadata(api, provider_id):
    response = api.api_get("/sso/saml2/sp/metadata", {"providerId": provider_id, "format": "xml"})
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("application/xml")
    return response.content.decode()


def _body(certificate):
    return "".join(line for line in certificate.splitlines() if "CERTIFICATE" not in line)


def test_metadata_is_schema_valid_sp_metadata_with_our_acs(saml_provider, api):
    saml_provider("acme-saml", want_assertions_signed=True)
    text = _metadata(api, "acme-saml")
    validate(text)  # the SAML 2.0 metadata XSD shipped with pysaml2; raises when invalid
    root = ElementTree.fromstring(text)
    assert root.tag == f"{MD}EntityDescriptor"
    assert root.get("entityID") == f"{ORIGIN}/saml/acme-saml"
    descriptor = root.find(f"{MD}SPSSODescriptor")
    assert descriptor.get("WantAssertionsSigned") == "true"
    assert descriptor.get("AuthnRequestsSigned") == "false"
    assert descriptor.get("protocolSupportEnumeration") == "urn:oasis:names:tc:SAML:2.0:protocol"
    assert [e.text for e in descriptor.findall(f"{MD}NameIDFormat")] == [
        "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"]
    services = descriptor.findall(f"{MD}AssertionConsumerService")
    assert [(s.get("index"), s.get("Binding"), s.get("Location")) for s in services] == [
        ("0", POST, f"{ORIGIN}{BASE}/sso/saml2/callback/acme-saml")]
    assert descriptor.find(f"{MD}SingleLogoutService") is None
    assert descriptor.find(f"{MD}KeyDescriptor") is None


def test_metadata_carries_the_signing_and_encryption_certificates_when_configured(saml_provider, saml_keys, api):
    saml_provider("acme-keys", sign_requests=True, encrypt=True)
    text = _metadata(api, "acme-keys")
    validate(text)
    descriptor = ElementTree.fromstring(text).find(f"{MD}SPSSODescriptor")
    assert descriptor.get("AuthnRequestsSigned") == "true"
    keys = {k.get("use"): k.find(f"{DS}KeyInfo/{DS}X509Data/{DS}X509Certificate").text
            for k in descriptor.findall(f"{MD}KeyDescriptor")}
    assert keys == {"signing": _body(saml_keys["sp_signing"].cert),
                    "encryption": _body(saml_keys["sp_encryption"].cert)}
    assert "PRIVATE" not in text


def test_metadata_uses_the_configured_entity_id_and_name_id_format(saml_provider, api):
    saml_provider("acme-custom", spMetadata={"entityID": "urn:acme:sp"},
                  identifierFormat="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent")
    root = ElementTree.fromstring(_metadata(api, "acme-custom"))
    assert root.get("entityID") == "urn:acme:sp"
    assert root.find(f"{MD}SPSSODescriptor/{MD}NameIDFormat").text == (
        "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent")


def test_given_sp_metadata_of_saml_elements_only_is_served_unchanged(saml_provider, api):
    # Served re-serialised from its SAML elements (I3, tests/security/test_stored_xss_metadata.py);
    # a document with nothing else round-trips byte for byte.
    given = ('<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="urn:given">'
             '<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
             f'<md:AssertionConsumerService index="0" Binding="{POST}" Location="{ORIGIN}/custom/acs"/>'
             "</md:SPSSODescriptor></md:EntityDescriptor>")
    saml_provider("acme-given", spMetadata={"metadata": given})
    assert _metadata(api, "acme-given") == given


def test_metadata_without_provider_id_is_a_validation_error(api, db):
    response = api.api_get("/sso/saml2/sp/metadata")
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_metadata_of_an_unknown_provider_is_404(api, db):
    response = api.api_get("/sso/saml2/sp/metadata", {"providerId": "nope"})
    assert response.status_code == 404
    assert error_of(response) == {"message": "No provider found for the given providerId",
                                  "code": "PROVIDER_NOT_FOUND", "status": 404}


def test_metadata_of_an_oidc_provider_is_saml_config_invalid(api, db, make_user):
    from sso.models import SsoProvider

    owner = make_user(email="oidc-owner@acme.com")
    SsoProvider.objects.create(provider_id="oidc-only", issuer="https://idp.acme.com", domain="acme.com",
                               oidc_config={"clientId": "x"}, user=owner)
    response = api.api_get("/sso/saml2/sp/metadata", {"providerId": "oidc-only"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "SAML_CONFIG_INVALID"


def test_get_provider_points_at_the_metadata_url(saml_provider, saml_owner):
    saml_provider("acme-saml")
    data = saml_owner.api_get("/sso/get-provider", {"providerId": "acme-saml"}).json()
    assert data["spMetadataUrl"] == f"{ORIGIN}{BASE}/sso/saml2/sp/metadata?providerId=acme-saml"


def test_deeply_nested_given_metadata_is_served_without_recursion_limits(saml_provider, api):
    # The re-serialiser walks the tree iteratively: nesting depth cannot turn into a 500.
    depth = 3000
    given = (f'<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="urn:deep">'
             '<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
             + "<md:Extensions>" * depth + "<md:Extensions/>" + "</md:Extensions>" * depth
             + f'<md:AssertionConsumerService index="0" Binding="{POST}" Location="{ORIGIN}/custom/acs"/>'
             "</md:SPSSODescriptor></md:EntityDescriptor>")
    saml_provider("acme-deep", spMetadata={"metadata": given})
    assert _metadata(api, "acme-deep") == given
