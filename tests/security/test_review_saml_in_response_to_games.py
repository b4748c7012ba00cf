"""I9 and I2: InResponseTo, RelayState and the unsigned Response wrapper.

The IdP signs only the Assertion (the common setting); the Response around it is unsigned, so its ID,
InResponseTo, Destination and Issuer are the attacker's to rewrite. The attacker holds a genuine response
answering the VICTIM's AuthnRequest (sent to the victim's browser), and can start sign-ins of her own
(getting her own RelayState and its cookie). She tries to finish the victim's answer in her browser,
to re-point it at her own AuthnRequest, to strip InResponseTo from the wrapper, to make the wrapper and
the assertion disagree, and to swap the Response's Destination/Issuer/ID. The victim's answer must only
ever work in the victim's browser, once.
"""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from authservice.models import Session
from sso.models import SsoProvider
from tests.conftest import BASE, ORIGIN, ApiClient
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import Claims

pytestmark = pytest.mark.django_db

IDP_ENTITY = "https://idp.acme.test/entity"
SP_ENTITY = f"{ORIGIN}/sp/acme"
ACS = f"{ORIGIN}{BASE}/sso/saml2/callback/acme"


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    idp_signer.require_binaries()
    return idp_signer.make_keypair(tmp_path_factory.mktemp("irt-idp"), "idp")


@pytest.fixture
def acme(make_user, key):
    owner = make_user(email="owner@acme.test", email_verified=True)
    for provider_id in ("acme", "acme2"):
        entity = f"{ORIGIN}/sp/{provider_id}"
        SsoProvider.objects.create(
            provider_id=provider_id, issuer=entity, domain="acme.test" if provider_id == "acme" else "acme2.test",
            user=owner, domain_verified=True,
            saml_config={"issuer": entity, "entryPoint": "https://idp.acme.test/sso", "cert": key.cert_pem,
                         "idpMetadata": {"entityID": IDP_ENTITY}})


@pytest.fixture
def victim(make_user):
    return make_user(email="victim@acme.test", email_verified=True)


def begin(client, provider_id="acme"):
    response = client.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": "/dashboard"})
    assert response.status_code == 200, response.content
    query = parse_qs(urlsplit(response.json()["url"]).query)
    return idp_signer.request_id(query["SAMLRequest"][0]), query["RelayState"][0]


def victims_answer(key, tmp_path, request_id):
    """``(claims, xml)``: the Assertion signed, the Response not."""
    claims = Claims(issuer=IDP_ENTITY, destination=ACS, audience=SP_ENTITY, in_response_to=request_id,
                    name_id="victim@acme.test", attributes={"email": "victim@acme.test"})
    return claims, idp_signer.sign(idp_signer.response_xml(claims), key, claims.assertion_id, tmp_path)


def wrapper(xml, old, new):
    """Rewrite the unsigned Response start tag only."""
    head, rest = xml.split(">", 1)
    assert old in head, head
    return head.replace(old, new, 1) + ">" + rest


def post(client, xml, relay_state=None, provider_id="acme"):
    data = {"SAMLResponse": idp_signer.encode(xml)}
    if relay_state is not None:
        data["RelayState"] = relay_state
    return client.post(f"{BASE}/sso/saml2/callback/{provider_id}", urlencode(data),
                       content_type="application/x-www-form-urlencoded")


def refused(response):
    return response.status_code == 302 and "error=" in response["Location"]


def test_the_victims_answer_finished_in_the_attackers_browser_is_refused(api, acme, victim, key, tmp_path):
    request_id, victim_relay = begin(api)
    claims, xml = victims_answer(key, tmp_path, request_id)
    attacker = ApiClient()
    _, attacker_relay = begin(attacker)
    assert refused(post(attacker, xml, attacker_relay))  # her own RelayState and cookie
    assert refused(post(attacker, xml))  # as if IdP-initiated
    assert refused(post(attacker, xml, victim_relay))  # the victim's RelayState without its cookie
    no_irt = wrapper(xml, f' InResponseTo="{request_id}"', "")
    assert refused(post(attacker, no_irt, attacker_relay))
    assert not Session.objects.filter(user=victim).exists()


def test_the_wrapper_cannot_re_point_the_victims_answer_at_the_attackers_request(api, acme, victim, key, tmp_path):
    victim_request, _ = begin(api)
    _, xml = victims_answer(key, tmp_path, victim_request)
    attacker = ApiClient()
    attacker_request, attacker_relay = begin(attacker)
    repointed = wrapper(xml, f'InResponseTo="{victim_request}"', f'InResponseTo="{attacker_request}"')
    assert refused(post(attacker, repointed, attacker_relay))
    assert not Session.objects.filter(user=victim).exists()


def test_the_wrapper_cannot_move_the_answer_to_another_provider(api, acme, victim, key, tmp_path):
    request_id, relay_state = begin(api)
    _, xml = victims_answer(key, tmp_path, request_id)
    elsewhere = wrapper(xml, f'Destination="{ACS}"', f'Destination="{ORIGIN}{BASE}/sso/saml2/callback/acme2"')
    assert refused(post(api, elsewhere, relay_state, provider_id="acme2"))
    assert not Session.objects.filter(user=victim).exists()


@pytest.mark.parametrize("change", ["issuer", "id_twin", "destination"])
def test_a_rewritten_wrapper_does_not_pass(api, acme, victim, key, tmp_path, change):
    request_id, relay_state = begin(api)
    claims, xml = victims_answer(key, tmp_path, request_id)
    if change == "issuer":
        xml = xml.replace(f"<saml:Issuer>{IDP_ENTITY}</saml:Issuer>", "<saml:Issuer>https://evil.test</saml:Issuer>", 1)
    elif change == "id_twin":
        xml = wrapper(xml, f'ID="{claims.response_id}"', f'ID="{claims.assertion_id}"')
    else:
        xml = wrapper(xml, f'Destination="{ACS}"', 'Destination="https://evil.test/acs"')
    assert refused(post(api, xml, relay_state))
    assert not Session.objects.filter(user=victim).exists()


def test_the_victims_answer_works_once_in_her_browser(api, acme, victim, key, tmp_path):
    request_id, relay_state = begin(api)
    _, xml = victims_answer(key, tmp_path, request_id)
    assert post(api, xml, relay_state)["Location"] == "/dashboard"
    assert refused(post(api, xml, relay_state))
    _, again = begin(api)
    assert refused(post(api, xml, again))
    assert Session.objects.filter(user=victim).count() == 1
