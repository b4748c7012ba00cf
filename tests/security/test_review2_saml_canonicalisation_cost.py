"""I6: an anonymous SAML response cannot make the signature check canonicalise expensively.

Found by the second attack pass on issue 12: the ACS of any verified SAML provider accepts a POST
from anyone, the IdP's entity ID is public, and libxmlsec1 runs a Reference's transforms before any
signature value is compared. Inclusive c14n renders every in-scope namespace on every element: 2,000
namespace declarations over 2,000 empty elements (49 KB) cost 74 s of CPU; a chain of 300 c14n
transforms canonicalised the document 300 times. A Reference may now hold only the SAML profile's
transforms (enveloped-signature, then at most one exclusive c14n), checked before libxmlsec1 runs,
so these documents never reach canonicalisation. The CPU each costs is a row of ``bench/abuse.py``;
here the mechanism is checked, not the time: no signature context ever verifies them.
"""

import base64
from urllib.parse import urlencode

import pytest
import xmlsec

from sso.models import SsoProvider

pytestmark = pytest.mark.django_db

ENTITY = "https://idp.victim.example/entity"
EXC = "http://www.w3.org/2001/10/xml-exc-c14n#"
INC = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
INC11 = "http://www.w3.org/2006/12/xml-c14n11"


@pytest.fixture
def victim(make_user, tmp_path):
    from tests.sso.saml import idp_signer
    idp_signer.require_binaries()
    key = idp_signer.make_keypair(tmp_path, "idp")
    return SsoProvider.objects.create(
        provider_id="victim", issuer="http://127.0.0.1:8000/sp/victim", domain="victim.example",
        user=make_user(email="owner@victim.example"), domain_verified=True,
        saml_config={"issuer": "http://127.0.0.1:8000/sp/victim", "entryPoint": "https://idp.victim.example/sso",
                     "cert": key.cert_pem, "idpMetadata": {"entityID": ENTITY}})


@pytest.fixture
def verifications(monkeypatch):
    """Every signature libxmlsec1 was asked to check (the python-xmlsec type cannot be patched, so
    its factory is)."""
    calls = []
    real = xmlsec.SignatureContext

    class Counted:
        def __init__(self, *args, **kwargs):
            object.__setattr__(self, "_context", real(*args, **kwargs))

        def __getattr__(self, name):
            return getattr(self._context, name)

        def __setattr__(self, name, value):
            setattr(self._context, name, value)

        def verify(self, node):
            calls.append(node.tag)
            return self._context.verify(node)

    monkeypatch.setattr(xmlsec, "SignatureContext", Counted)
    return calls


def hostile(namespaces, elements, transforms):
    decls = " ".join(f'xmlns:n{i}="u:{i}"' for i in range(namespaces))
    chain = "".join(f'<ds:Transform Algorithm="{algorithm}"/>' for algorithm in transforms)
    sig = ('<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo>'
           f'<ds:CanonicalizationMethod Algorithm="{EXC}"/>'
           '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>'
           f'<ds:Reference URI="#r1"><ds:Transforms>{chain}</ds:Transforms>'
           '<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>'
           '<ds:DigestValue>AAAA</ds:DigestValue></ds:Reference>'
           '</ds:SignedInfo><ds:SignatureValue>AAAA</ds:SignatureValue></ds:Signature>')
    return (f'<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" '
            f'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" {decls} ID="r1" Version="2.0" '
            f'IssueInstant="2026-01-01T00:00:00Z"><saml:Issuer>{ENTITY}</saml:Issuer>{sig}'
            '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>'
            f'<saml:Assertion ID="a1" Version="2.0" IssueInstant="2026-01-01T00:00:00Z">'
            f'<saml:Issuer>{ENTITY}</saml:Issuer>{"<x/>" * elements}</saml:Assertion></samlp:Response>').encode()


def post(client, document):
    body = urlencode({"SAMLResponse": base64.b64encode(document).decode()})
    assert len(body) < 64 * 1024
    return client.post("/api/auth/sso/saml2/callback/victim", body,
                       content_type="application/x-www-form-urlencoded", HTTP_ORIGIN="https://idp.example")


def assert_refused(response):
    assert response.status_code == 302
    assert "error=" in response["Location"] and "auth.session_token" not in response.cookies


ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"


@pytest.mark.parametrize("transforms", [
    pytest.param((ENVELOPED, INC), id="inclusive c14n"),
    pytest.param((ENVELOPED, INC11), id="inclusive c14n 1.1"),
    pytest.param((ENVELOPED,) + (EXC,) * 300, id="300 chained c14n"),
    pytest.param((ENVELOPED, EXC, EXC), id="two c14n"),
    pytest.param((EXC,), id="no enveloped-signature"),
])
def test_a_reference_outside_the_saml_profile_is_refused_before_any_canonicalisation(
        victim, client, verifications, transforms):
    namespaces, elements = (1500, 1500) if len(transforms) < 10 else (0, 3000)
    assert_refused(post(client, hostile(namespaces, elements, transforms)))
    assert verifications == []


def test_the_profiles_own_transforms_reach_the_signature_check_and_a_forged_value_fails_there(
        victim, client, verifications):
    """Exclusive c14n renders only the namespaces an element uses: the declarations cost nothing."""
    assert_refused(post(client, hostile(1500, 1500, (ENVELOPED, EXC))))
    assert verifications
