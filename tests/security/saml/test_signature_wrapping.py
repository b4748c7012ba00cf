"""I2: what is verified is what is used. SAML signature wrapping (issue 12 F1).

Every document of the corpus (tests/security/saml/corpus.py: XSW1-XSW8, the signed NoPassive error
hidden in a ds:Object, a comment in the NameID, namespace tricks, duplicate IDs, two Issuers, a
Reference to another element) is built from genuine responses signed by the IdP's key with the
xmlsec1 binary, posted to the ACS by the browser that started the sign-in, with the provider's
defaults (``wantAssertionsSigned`` off, the most exposed setting). Each must end in an error
redirect with no session, no new user and no account.
"""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account, Session
from tests.conftest import BASE
from tests.security.saml import corpus
from tests.sso.saml import idp_signer

pytestmark = pytest.mark.django_db




@pytest.fixture
def victim(make_user):
    return make_user(email=corpus.VICTIM, email_verified=True)


def begin(api):
    response = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard",
                                             "errorCallbackURL": "/sso-error"})
    assert response.status_code == 200, response.content
    query = parse_qs(urlsplit(response.json()["url"]).query)
    return idp_signer.request_id(query["SAMLRequest"][0]), query["RelayState"][0]


def post(api, xml, relay_state):
    data = urlencode({"SAMLResponse": idp_signer.encode(xml), "RelayState": relay_state})
    return api.post(f"{BASE}/sso/saml2/callback/acme", data, content_type="application/x-www-form-urlencoded")


def test_the_genuine_response_the_corpus_starts_from_signs_in(api, acme, idp_key, tmp_path):
    request_id, relay_state = begin(api)
    _, xml = corpus.Forge(idp_key, tmp_path, request_id).response_signed()
    response = post(api, xml, relay_state)
    assert response["Location"] == "/dashboard"
    assert Session.objects.get().user.email == corpus.ATTACKER


@pytest.mark.parametrize("variant", sorted(corpus.CORPUS))
def test_a_wrapped_or_tampered_response_is_refused_with_no_session(api, acme, victim, idp_key, tmp_path, variant):
    request_id, relay_state = begin(api)
    xml = corpus.CORPUS[variant](corpus.Forge(idp_key, tmp_path, request_id))
    users_before = set(get_user_model().objects.values_list("pk", flat=True))
    response = post(api, xml, relay_state)
    assert response.status_code == 302, response.content
    assert "error=" in response["Location"], response["Location"]
    assert not Session.objects.exists()
    assert not Account.objects.filter(provider_id="acme").exists()
    assert set(get_user_model().objects.values_list("pk", flat=True)) == users_before
