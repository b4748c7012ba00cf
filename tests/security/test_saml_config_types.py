"""I4 ("a parse error is a 400, never a 500"): every samlConfig value has a JSON type, checked at the input.

The attacker registers (one ordinary account) a provider whose samlConfig holds values of the wrong
type (a list for an algorithm, an object for an entity ID, a number for metadata). They must be refused
with ``400 VALIDATION_ERROR``; a row of that shape already stored must not turn the anonymous sign-in,
SP metadata or ACS URLs into 500s either.
"""
import pytest

from sso.models import SsoProvider
from tests.conftest import BASE, ORIGIN, PASSWORD, ApiClient
from tests.sso.conftest import _sso_defaults  # noqa: F401 - fixture
from tests.sso.saml import idp_signer

pytestmark = pytest.mark.django_db

CASES = {
    "signatureAlgorithm_list": ("signatureAlgorithm", {"signatureAlgorithm": []}),
    "digestAlgorithm_list": ("digestAlgorithm", {"digestAlgorithm": ["x"]}),
    "idp_metadata_int": ("idpMetadata.metadata", {"idpMetadata": {"entityID": "https://idp.evil.test/e",
                                                                  "metadata": 5}}),
    "sp_metadata_int": ("spMetadata.metadata", {"spMetadata": {"metadata": 5}}),
    "idp_entityID_dict": ("idpMetadata.entityID", {"idpMetadata": {"entityID": {"a": 1}}}),
    "idp_entityID_int": ("idpMetadata.entityID", {"idpMetadata": {"entityID": 5}}),
    "sp_entityID_dict": ("spMetadata.entityID", {"spMetadata": {"entityID": {"a": 1}}}),
    "identifierFormat_list": ("identifierFormat", {"identifierFormat": ["a"]}),
    "sso_service_string": ("idpMetadata.singleSignOnService", {"idpMetadata": {
        "entityID": "https://idp.evil.test/e", "singleSignOnService": "https://idp.evil.test/sso"}}),
    "mapping_extra_field_object": ("mapping.extraFields", {"mapping": {"email": "email", "name": "cn",
                                                                      "extraFields": {"dept": {"a": 1}}}}),
    "sp_private_key_list": ("spMetadata.privateKey", {"spMetadata": {"privateKey": ["k"]}}),
}
RESPONSE = ('<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" '
            'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_a"><saml:Issuer>x</saml:Issuer>'
            '<saml:Assertion ID="_b"/></samlp:Response>')


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    idp_signer.require_binaries()
    return idp_signer.make_keypair(tmp_path_factory.mktemp("k"), "idp")


def _config(key, case):
    config = {"entryPoint": "https://idp.evil.test/sso", "cert": key.cert_pem,
              "idpMetadata": {"entityID": "https://idp.evil.test/e"}}
    config.update(CASES[case][1])
    return config


def _anonymous_statuses():
    anonymous = ApiClient()
    return {
        "sign-in": anonymous.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/"}).status_code,
        "metadata": anonymous.api_get("/sso/saml2/sp/metadata", {"providerId": "evil", "format": "xml"}).status_code,
        "acs": anonymous.post(f"{BASE}/sso/saml2/callback/evil",
                              "SAMLResponse=" + idp_signer.encode(RESPONSE).replace("+", "%2B"),
                              content_type="application/x-www-form-urlencoded").status_code,
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_wrongly_typed_saml_config_value_is_a_400_validation_error(make_user, key, case):
    make_user(email="eve@evil.test", email_verified=True)
    owner = ApiClient()
    assert owner.api_post("/sign-in/email", {"email": "eve@evil.test", "password": PASSWORD}).status_code == 200

    registered = owner.api_post("/sso/register", {"providerId": "evil", "issuer": f"{ORIGIN}/sp/evil",
                                                  "domain": "evil.test", "samlConfig": _config(key, case)})

    assert registered.status_code == 400, registered.content
    assert registered.json()["code"] == "VALIDATION_ERROR"
    assert f"[body.samlConfig.{CASES[case][0]}" in registered.json()["message"]
    assert not SsoProvider.objects.exists()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_stored_wrongly_typed_saml_config_never_answers_500(make_user, key, case):
    owner = make_user(email="eve@evil.test", email_verified=True)
    SsoProvider.objects.create(provider_id="evil", issuer=f"{ORIGIN}/sp/evil", domain="evil.test", user=owner,
                               domain_verified=True, saml_config={**_config(key, case), "issuer": f"{ORIGIN}/sp/evil"})

    statuses = _anonymous_statuses()

    assert all(status < 500 for status in statuses.values()), statuses


@pytest.mark.parametrize("mapping", [["email"], {"email": 5, "name": {}, "extraFields": ["dept"]},
                                     {"extraFields": {"dept": 7}}, "mapping"])
def test_a_stored_wrongly_typed_oidc_mapping_falls_back_to_the_defaults(mapping):
    """Rows stored before oidcConfig was typed: the OIDC callback reads them tolerantly, never a 500."""
    from sso.oidc.client import map_identity

    identity = map_identity({"mapping": mapping}, {"sub": "s1", "email": "Ada@Acme.com", "name": "Ada"}, None)
    assert identity.email == "ada@acme.com"
    assert identity.user_info["name"] == "Ada"
