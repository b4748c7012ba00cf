"""I4: every URL-valued node of SAML metadata, attribute or element, is http(s) (mailto: for contacts).

The attacker registers a provider whose SP metadata (served from the auth origin, and rendered as links
by IdP consoles and federation registries) or IdP metadata carries ``javascript:`` in
``md:OrganizationURL``, ``mdui:InformationURL``/``PrivacyStatementURL``/``Logo`` or a contact's
``md:EmailAddress``. Registration and update refuse it with ``400 SAML_URL_INVALID``.
"""
import pytest

from sso.models import SsoProvider
from tests.conftest import ORIGIN, PASSWORD, ApiClient
from tests.sso.conftest import _sso_defaults  # noqa: F401 - fixture
from tests.sso.saml import idp_signer

pytestmark = pytest.mark.django_db
MD = "urn:oasis:names:tc:SAML:2.0:metadata"
MDUI = "urn:oasis:names:tc:SAML:metadata:ui"
JS = "javascript:alert(document.domain)"


@pytest.fixture(scope="module")
def idp(tmp_path_factory):
    idp_signer.require_binaries()
    return idp_signer.make_keypair(tmp_path_factory.mktemp("idp"), "idp")


@pytest.fixture
def owner(make_user):
    make_user(email="eve@evil.test", email_verified=True)
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": "eve@evil.test", "password": PASSWORD}).status_code == 200
    return client


def sp_metadata(extensions="", trailer=""):
    return (f'<md:EntityDescriptor xmlns:md="{MD}" xmlns:mdui="{MDUI}" entityID="{ORIGIN}/sp/p"><md:SPSSODescriptor '
            'protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
            f'{extensions}<md:AssertionConsumerService '
            'Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://evil.test/acs" index="0"/>'
            f'</md:SPSSODescriptor>{trailer}</md:EntityDescriptor>')


def organization(url):
    return ('<md:Organization><md:OrganizationName xml:lang="en">x</md:OrganizationName>'
            '<md:OrganizationDisplayName xml:lang="en">x</md:OrganizationDisplayName>'
            f'<md:OrganizationURL xml:lang="en">{url}</md:OrganizationURL></md:Organization>')


def ui(element):
    return f'<md:Extensions><mdui:UIInfo>{element}</mdui:UIInfo></md:Extensions>'


def contact(address):
    return f'<md:ContactPerson contactType="technical"><md:EmailAddress>{address}</md:EmailAddress></md:ContactPerson>'


def register(owner, idp, metadata):
    return owner.api_post("/sso/register", {
        "providerId": "p", "issuer": f"{ORIGIN}/sp/p", "domain": "evil.test",
        "samlConfig": {"entryPoint": "https://idp.evil.test/sso", "cert": idp.cert_pem,
                       "idpMetadata": {"entityID": "https://idp.evil.test/e"}, "spMetadata": {"metadata": metadata}}})


def assert_refused(response):
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "SAML_URL_INVALID"


def test_a_javascript_organization_url_is_refused_at_register(owner, idp):
    assert_refused(register(owner, idp, sp_metadata(trailer=organization(JS))))
    assert not SsoProvider.objects.exists()


@pytest.mark.parametrize("element", [
    f'<mdui:InformationURL xml:lang="en">{JS}</mdui:InformationURL>',
    f'<mdui:PrivacyStatementURL xml:lang="en">{JS}</mdui:PrivacyStatementURL>',
    f'<mdui:Logo height="16" width="16">{JS}</mdui:Logo>',
    '<mdui:Logo height="16" width="16">data:image/svg+xml,&lt;svg onload=alert(1)&gt;</mdui:Logo>',
])
def test_a_non_http_mdui_url_is_refused_at_register(owner, idp, element):
    assert_refused(register(owner, idp, sp_metadata(extensions=ui(element))))


def test_a_contact_address_with_another_scheme_is_refused(owner, idp):
    assert_refused(register(owner, idp, sp_metadata(trailer=contact(JS))))


@pytest.mark.parametrize("address", ["mailto:ops@evil.test", "ops@evil.test"])
def test_a_mailto_or_plain_contact_address_is_accepted(owner, idp, address):
    assert register(owner, idp, sp_metadata(trailer=contact(address))).status_code == 200


def test_https_url_elements_are_accepted_and_served(owner, idp):
    metadata = sp_metadata(extensions=ui('<mdui:InformationURL xml:lang="en">https://evil.test/info</mdui:InformationURL>'),
                           trailer=organization("https://evil.test/"))
    assert register(owner, idp, metadata).status_code == 200
    served = ApiClient().api_get("/sso/saml2/sp/metadata", {"providerId": "p", "format": "xml"})
    assert b">https://evil.test/</md:OrganizationURL>" in served.content


def test_a_javascript_organization_url_is_refused_at_update(owner, idp):
    assert register(owner, idp, sp_metadata()).status_code == 200

    updated = owner.api_post("/sso/update-provider", {
        "providerId": "p", "samlConfig": {"spMetadata": {"metadata": sp_metadata(trailer=organization(JS))}}})

    assert_refused(updated)
    assert "javascript:" not in SsoProvider.objects.get().saml_config["spMetadata"]["metadata"]


def test_a_stored_javascript_url_element_is_not_served(make_user, idp):
    owner = make_user(email="old@evil.test", email_verified=True)
    SsoProvider.objects.create(
        provider_id="p", issuer=f"{ORIGIN}/sp/p", domain="evil.test", user=owner, domain_verified=True,
        saml_config={"issuer": f"{ORIGIN}/sp/p", "entryPoint": "https://idp.evil.test/sso", "cert": idp.cert_pem,
                     "idpMetadata": {"entityID": "https://idp.evil.test/e"},
                     "spMetadata": {"metadata": sp_metadata(trailer=organization(JS) + contact(JS))}})

    served = ApiClient().api_get("/sso/saml2/sp/metadata", {"providerId": "p", "format": "xml"})

    assert served.status_code == 200
    assert b"javascript:" not in served.content
    assert b"AssertionConsumerService" in served.content
