"""I1/I2/I9: two SAML providers, registered by different users, that trust the SAME IdP (same entity ID,
same signing certificate). The attacker's copy ("evil", verified for evil.test, her own account) is set up
to accept everything the victim's provider ("acme", verified for acme.test) accepts: the same IdP entity ID
and certificate, ``audience`` = acme's SP entity ID, and SP metadata whose AssertionConsumerService is
acme's ACS URL (so Destination and Recipient of acme's responses pass at evil too).

The attacker tries to use genuine messages of the shared IdP across the two providers:
- the victim's response to acme's AuthnRequest, posted to evil's ACS (SP-initiated, and with IdP-initiated
  sign-in allowed, without InResponseTo);
- her own response to evil's AuthnRequest, posted to acme's ACS, with and without her RelayState;
- an assertion already consumed at acme, replayed at evil.
None of them may give a session for a user of acme.test, and the victim's own flow still works.
"""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from authservice.models import Account, Session
from sso.models import SsoProvider
from tests.conftest import BASE, ORIGIN
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import Claims

pytestmark = pytest.mark.django_db

IDP_ENTITY = "https://idp.shared.test/entity"
IDP_SSO = "https://idp.shared.test/sso"


def sp_entity(provider_id):
    return f"{ORIGIN}/sp/{provider_id}"


def acs(provider_id):
    return f"{ORIGIN}{BASE}/sso/saml2/callback/{provider_id}"


@pytest.fixture(scope="module")
def idp_key(tmp_path_factory):
    idp_signer.require_binaries()
    return idp_signer.make_keypair(tmp_path_factory.mktemp("shared-idp"), "idp")


@pytest.fixture
def providers(make_user, idp_key, settings):
    settings.AUTHSERVICE_SSO = {**getattr(settings, "AUTHSERVICE_SSO", {}), "domain_verification": {"enabled": True}}
    acme_owner = make_user(email="owner@acme.test", email_verified=True)
    eve = make_user(email="eve@evil.test", email_verified=True)
    acme = SsoProvider.objects.create(
        provider_id="acme", issuer=sp_entity("acme"), domain="acme.test", user=acme_owner, domain_verified=True,
        saml_config={"issuer": sp_entity("acme"), "entryPoint": IDP_SSO, "cert": idp_key.cert_pem,
                     "idpMetadata": {"entityID": IDP_ENTITY}})
    sp_metadata = (
        '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="' + sp_entity("acme") + '">'
        '<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
        '<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="'
        + acs("acme") + '" index="0"/></md:SPSSODescriptor></md:EntityDescriptor>')
    evil = SsoProvider.objects.create(
        provider_id="evil", issuer=sp_entity("acme"), domain="evil.test", user=eve, domain_verified=True,
        saml_config={"issuer": sp_entity("acme"), "entryPoint": IDP_SSO, "cert": idp_key.cert_pem,
                     "audience": sp_entity("acme"), "idpMetadata": {"entityID": IDP_ENTITY},
                     "spMetadata": {"metadata": sp_metadata, "entityID": sp_entity("acme")}})
    return acme, evil


@pytest.fixture
def victim(make_user):
    return make_user(email="victim@acme.test", email_verified=True)


def begin(client, provider_id):
    response = client.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": "/dashboard",
                                                "errorCallbackURL": "/sso-error"})
    assert response.status_code == 200, response.content
    query = parse_qs(urlsplit(response.json()["url"]).query)
    return idp_signer.request_id(query["SAMLRequest"][0]), query["RelayState"][0]


def signed_response(idp_key, tmp_path, email, in_response_to=None, provider_id="acme", both=True):
    claims = Claims(issuer=IDP_ENTITY, destination=acs(provider_id), audience=sp_entity("acme"),
                    in_response_to=in_response_to, name_id=email, attributes={"email": email})
    xml = idp_signer.sign(idp_signer.response_xml(claims), idp_key, claims.assertion_id, tmp_path)
    if both:
        xml = idp_signer.sign(xml, idp_key, claims.response_id, tmp_path)
    return xml


def post(client, provider_id, xml, relay_state=None):
    data = {"SAMLResponse": idp_signer.encode(xml)}
    if relay_state is not None:
        data["RelayState"] = relay_state
    return client.post(f"{BASE}/sso/saml2/callback/{provider_id}", urlencode(data),
                       content_type="application/x-www-form-urlencoded")


def assert_refused(response):
    assert response.status_code in (302, 401, 404), response.content
    if response.status_code == 302:
        assert "error=" in response["Location"], response["Location"]


def no_session_for(user):
    return not Session.objects.filter(user=user).exists()


def test_the_victims_response_to_acme_posted_to_the_attackers_provider_signs_in_no_one(
        api, providers, victim, idp_key, tmp_path):
    request_id, relay_state = begin(api, "acme")
    xml = signed_response(idp_key, tmp_path, victim.email, request_id)
    # The attacker's browser, with a RelayState of her own provider and without one.
    attacker = type(api)()
    _, evil_relay = begin(attacker, "evil")
    assert_refused(post(attacker, "evil", xml, evil_relay))
    assert_refused(post(attacker, "evil", xml))
    assert no_session_for(victim)
    assert not Account.objects.filter(provider_id="evil").exists()
    # The victim's own flow is untouched: her AuthnRequest was not consumed by the attempts above.
    response = post(api, "acme", xml, relay_state)
    assert response["Location"] == "/dashboard", response["Location"]
    assert Session.objects.filter(user=victim).count() == 1


def test_an_unsolicited_victim_assertion_at_the_attackers_provider_is_refused_by_domain_trust(
        api, providers, victim, idp_key, tmp_path, settings):
    settings.AUTHSERVICE_SSO = {**settings.AUTHSERVICE_SSO, "saml": {"allow_idp_initiated": True}}
    xml = signed_response(idp_key, tmp_path, victim.email, provider_id="acme")
    response = post(api, "evil", xml)
    assert_refused(response)
    assert no_session_for(victim)
    assert not Account.objects.filter(provider_id="evil").exists()


def test_the_attackers_answer_to_her_own_provider_is_refused_at_the_victims(
        api, providers, victim, idp_key, tmp_path):
    attacker = type(api)()
    request_id, relay_state = begin(attacker, "evil")
    # The shared IdP signed, for the attacker, a response naming an acme.test address she may use at the IdP.
    xml = signed_response(idp_key, tmp_path, victim.email, request_id, provider_id="acme")
    assert_refused(post(attacker, "acme", xml, relay_state))
    assert_refused(post(attacker, "acme", xml))
    assert_refused(post(api, "acme", xml))  # posted by the victim's browser (login CSRF)
    assert no_session_for(victim)


def test_an_assertion_consumed_at_acme_cannot_be_replayed_at_the_attackers_provider(
        api, providers, victim, idp_key, tmp_path, settings):
    request_id, relay_state = begin(api, "acme")
    xml = signed_response(idp_key, tmp_path, victim.email, request_id)
    assert post(api, "acme", xml, relay_state)["Location"] == "/dashboard"
    settings.AUTHSERVICE_SSO = {**settings.AUTHSERVICE_SSO, "saml": {"allow_idp_initiated": True}}
    attacker = type(api)()
    assert_refused(post(attacker, "evil", xml))
    assert_refused(post(attacker, "acme", xml))
    assert Session.objects.filter(user=victim).count() == 1
