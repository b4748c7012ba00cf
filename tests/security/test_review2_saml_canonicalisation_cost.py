"""I6: an anonymous SAML response's signature check costs what its size justifies.

The attacker needs no account: the ACS of any verified SAML provider accepts a POST, and the IdP's
entity ID is public. The response has the one shape sso.saml.structure allows, but is built to make
the canonicalisation that precedes every digest check expensive: thousands of namespace declarations
in scope of the signed element, SignedInfo canonicalised with them, and an Assertion full of elements.
These variants stay cheap (exclusive C14N renders only visibly used namespaces; SignedInfo is a handful
of elements). They are kept as regression guards next to the variants that are not cheap yet
(inclusive C14N of a many-element Response under many namespaces, long transform chains), which are
reported, not committed.
"""

import base64
import time
from urllib.parse import urlencode

import pytest

from sso.models import SsoProvider
from tests.sso.conftest import _sso_defaults  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

ENTITY = "https://idp.victim.example/entity"
EXC = "http://www.w3.org/2001/10/xml-exc-c14n#"
INC = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"


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


def hostile(namespaces, elements, reference_c14n, signed_info_c14n):
    decls = " ".join(f'xmlns:n{i}="u:{i}"' for i in range(namespaces))
    sig = ('<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo>'
           f'<ds:CanonicalizationMethod Algorithm="{signed_info_c14n}"/>'
           '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>'
           '<ds:Reference URI="#r1"><ds:Transforms>'
           '<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>'
           f'<ds:Transform Algorithm="{reference_c14n}"/></ds:Transforms>'
           '<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>'
           '<ds:DigestValue>AAAA</ds:DigestValue></ds:Reference>'
           '</ds:SignedInfo><ds:SignatureValue>AAAA</ds:SignatureValue></ds:Signature>')
    return (f'<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" '
            f'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" {decls} ID="r1" Version="2.0" '
            f'IssueInstant="2026-01-01T00:00:00Z"><saml:Issuer>{ENTITY}</saml:Issuer>{sig}'
            '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>'
            f'<saml:Assertion ID="a1" Version="2.0" IssueInstant="2026-01-01T00:00:00Z">'
            f'<saml:Issuer>{ENTITY}</saml:Issuer>{"<x/>" * elements}</saml:Assertion></samlp:Response>').encode()


@pytest.mark.parametrize(("namespaces", "elements", "reference_c14n", "signed_info_c14n"), [
    (500, 1000, EXC, EXC),      # exclusive C14N: unused namespaces are never rendered
    (2000, 0, EXC, INC),        # inclusive C14N of SignedInfo only: a handful of elements
    (1500, 1500, EXC, INC),
])
def test_a_hostile_response_is_refused_cheaply(victim, client, namespaces, elements, reference_c14n,
                                               signed_info_c14n):
    body = urlencode({"SAMLResponse": base64.b64encode(
        hostile(namespaces, elements, reference_c14n, signed_info_c14n)).decode()})
    assert len(body) < 64 * 1024
    start = time.process_time()
    response = client.post("/api/auth/sso/saml2/callback/victim", body,
                           content_type="application/x-www-form-urlencoded", HTTP_ORIGIN="https://idp.example")
    spent = time.process_time() - start
    assert response.status_code == 302
    assert "error=" in response["Location"] and "auth.session_token" not in response.cookies
    assert spent < 0.1, f"{spent:.3f} s of CPU for {len(body)} bytes"
