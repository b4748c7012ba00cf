"""I2 with encrypted assertions: what is decrypted and verified is what is used.

The IdP signs the Assertion and encrypts it for the SP; the Response around it is not signed, so everything
outside the ciphertext is the attacker's to rearrange. The SP's encryption certificate is public (SP
metadata), so the attacker can encrypt anything for the SP. She holds a genuine response for herself
(eve@acme.test) and encrypts an UNSIGNED twin assertion: same Assertion ID, Issuer and NameID, but an
e-mail attribute naming the victim. Then she hides the twin's EncryptedData where a second decryptor
(pysaml2 decrypts the first EncryptedData of its own re-serialisation, again and again) finds it but
sso.saml.verified does not: beside the EncryptedAssertion, in Extensions, in StatusDetail, inside an
EncryptedKey, as a second EncryptedData of the EncryptedAssertion, and together with a "poison"
EncryptedData whose plaintext makes pysaml2's decryption of the genuine one fail.

Every variant must end with no session for the victim (a refusal, or at most eve's own session).
"""

import base64
import os

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from urllib.parse import parse_qs, urlencode, urlsplit

from authservice.models import Account, Session
from sso.models import SsoProvider
from tests.conftest import BASE, ORIGIN
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import Claims

pytestmark = pytest.mark.django_db

IDP_ENTITY = "https://idp.acme.test/entity"
XENC = "http://www.w3.org/2001/04/xmlenc#"
DS = "http://www.w3.org/2000/09/xmldsig#"
ACS = f"{ORIGIN}{BASE}/sso/saml2/callback/acme"
SP_ENTITY = f"{ORIGIN}/sp/acme"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    idp_signer.require_binaries()
    directory = tmp_path_factory.mktemp("enc-wrap-keys")
    return {name: idp_signer.make_keypair(directory, name) for name in ("idp", "sp")}


@pytest.fixture
def acme(make_user, keys):
    owner = make_user(email="owner@acme.test", email_verified=True)
    return SsoProvider.objects.create(
        provider_id="acme", issuer=SP_ENTITY, domain="acme.test", user=owner, domain_verified=True,
        saml_config={"issuer": SP_ENTITY, "entryPoint": "https://idp.acme.test/sso", "cert": keys["idp"].cert_pem,
                     "idpMetadata": {"entityID": IDP_ENTITY}, "wantAssertionsSigned": True,
                     "spMetadata": {"encPrivateKey": keys["sp"].key_path.read_text(),
                                    "encryptCert": keys["sp"].cert_pem}})


@pytest.fixture
def people(make_user):
    return make_user(email="eve@acme.test", email_verified=True), make_user(email="victim@acme.test",
                                                                          email_verified=True)


def _poison(cert_pem):
    """An EncryptedData for the SP whose plaintext holds a RetrievalMethod to a remote URI."""
    key = os.urandom(32)
    wrapped = x509.load_pem_x509_certificate(cert_pem.encode()).public_key().encrypt(
        key, padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None))
    plaintext = f'<x:p xmlns:x="urn:x"><d:RetrievalMethod xmlns:d="{DS}" URI="https://evil.test/k"/></x:p>'.encode()
    pad = 16 - len(plaintext) % 16
    plaintext += bytes(pad - 1) + bytes([pad])
    iv = os.urandom(16)
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    value = base64.b64encode(iv + encryptor.update(plaintext) + encryptor.finalize()).decode()
    return (f'<xenc:EncryptedData xmlns:xenc="{XENC}" Type="{XENC}Element">'
            f'<xenc:EncryptionMethod Algorithm="{XENC}aes256-cbc"/><ds:KeyInfo xmlns:ds="{DS}"><xenc:EncryptedKey>'
            f'<xenc:EncryptionMethod Algorithm="{XENC}rsa-oaep-mgf1p"/><xenc:CipherData><xenc:CipherValue>'
            f"{base64.b64encode(wrapped).decode()}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey>"
            f"</ds:KeyInfo><xenc:CipherData><xenc:CipherValue>{value}</xenc:CipherValue></xenc:CipherData>"
            "</xenc:EncryptedData>")


def _encrypted_key_holding(inner):
    return (f'<xenc:EncryptedKey xmlns:xenc="{XENC}"><xenc:EncryptionMethod Algorithm="{XENC}rsa-oaep-mgf1p"/>'
            f'<ds:KeyInfo xmlns:ds="{DS}">{inner}</ds:KeyInfo><xenc:CipherData><xenc:CipherValue>AAAA'
            "</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey>")


VARIANTS = {
    # name: (Response children before the EncryptedAssertion, its content, after it, Extensions, StatusDetail)
    "twin_beside_before": lambda r, t, p: (t, r, "", "", ""),
    "twin_beside_after": lambda r, t, p: ("", r, t, "", ""),
    "twin_in_extensions": lambda r, t, p: ("", r, "", t, ""),
    "twin_in_status_detail": lambda r, t, p: ("", r, "", "", t),
    "twin_in_an_encrypted_key_before_the_data": lambda r, t, p: ("", _encrypted_key_holding(t) + r, "", "", ""),
    "twin_in_an_encrypted_key_after_the_data": lambda r, t, p: ("", r + _encrypted_key_holding(t), "", "", ""),
    "twin_as_first_of_two_encrypted_data": lambda r, t, p: ("", t + r, "", "", ""),
    "twin_as_last_of_two_encrypted_data": lambda r, t, p: ("", r + t, "", "", ""),
    "poison_in_extensions_twin_beside": lambda r, t, p: (t, r, "", p, ""),
    "poison_and_twin_in_extensions": lambda r, t, p: ("", r, "", p + t, ""),
    "poison_in_status_detail_twin_beside": lambda r, t, p: (t, r, "", "", p),
}


def begin(api):
    response = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard",
                                             "errorCallbackURL": "/sso-error"})
    assert response.status_code == 200, response.content
    query = parse_qs(urlsplit(response.json()["url"]).query)
    return idp_signer.request_id(query["SAMLRequest"][0]), query["RelayState"][0]


def build(keys, tmp_path, request_id, variant=None):
    genuine = Claims(issuer=IDP_ENTITY, destination=ACS, audience=SP_ENTITY, in_response_to=request_id,
                     name_id="eve@acme.test", attributes={"email": "eve@acme.test"})
    twin = Claims(issuer=IDP_ENTITY, destination=ACS, audience=SP_ENTITY, in_response_to=request_id,
                  name_id="eve@acme.test", attributes={"email": "victim@acme.test"},
                  assertion_id=genuine.assertion_id, response_id=genuine.response_id)
    signed = idp_signer.sign(idp_signer.assertion_xml(genuine), keys["idp"], genuine.assertion_id, tmp_path)
    real = idp_signer.encrypt(signed, keys["sp"].cert_path, tmp_path)
    if variant is None:
        return idp_signer.response_xml(genuine, assertion=f"<saml:EncryptedAssertion>{real}</saml:EncryptedAssertion>")
    fake = idp_signer.encrypt(idp_signer.assertion_xml(twin), keys["sp"].cert_path, tmp_path)
    before, inside, after, extensions, detail = VARIANTS[variant](real, fake, _poison(keys["sp"].cert_pem))
    xml = idp_signer.response_xml(
        genuine, assertion=f"{before}<saml:EncryptedAssertion>{inside}</saml:EncryptedAssertion>{after}",
        extensions=f"<samlp:Extensions>{extensions}</samlp:Extensions>" if extensions else "")
    if detail:
        xml = xml.replace("</samlp:Status>", f"<samlp:StatusDetail>{detail}</samlp:StatusDetail></samlp:Status>", 1)
    return xml


def post(api, xml, relay_state):
    return api.post(f"{BASE}/sso/saml2/callback/acme",
                    urlencode({"SAMLResponse": idp_signer.encode(xml), "RelayState": relay_state}),
                    content_type="application/x-www-form-urlencoded")


def test_the_genuine_encrypted_response_signs_in_eve(api, acme, people, keys, tmp_path):
    eve, _ = people
    request_id, relay_state = begin(api)
    response = post(api, build(keys, tmp_path, request_id), relay_state)
    assert response["Location"] == "/dashboard", response["Location"]
    assert Session.objects.get().user == eve


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_hidden_encrypted_twin_never_signs_in_the_victim(api, acme, people, keys, tmp_path, variant):
    eve, victim = people
    request_id, relay_state = begin(api)
    response = post(api, build(keys, tmp_path, request_id, variant), relay_state)
    assert response.status_code == 302, response.content
    assert not Session.objects.filter(user=victim).exists(), response["Location"]
    assert not Account.objects.filter(provider_id="acme", user=victim).exists()
    # Either refused, or eve's own genuine assertion was what counted.
    if Session.objects.exists():
        assert response["Location"] == "/dashboard"
        assert Session.objects.get().user == eve
    else:
        assert "error=" in response["Location"], response["Location"]
