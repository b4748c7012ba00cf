"""I6: a SAML response costs work in proportion to what it may lawfully hold, not to how many
xenc:EncryptedData an attacker stuffed into it.

pysaml2 decrypts "the first EncryptedData of the document, then re-parses it" until none is left, so
every EncryptedData outside the one EncryptedAssertion (say, in samlp:Extensions, which nobody signs
when only the Assertion is) used to cost a decryption and a parse of the whole document: a 45 KB
response cost seconds, before InResponseTo or replay were checked. sso.saml.structure now admits
XML encryption only inside the one EncryptedAssertion, so such a response is refused before any
decryption. Decryptions are counted, not timed.
"""
import base64
import os
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import xmlsec
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from sso.models import SsoProvider
from sso.saml import signature
from tests.conftest import BASE, ORIGIN
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import Claims

pytestmark = pytest.mark.django_db

XENC = "http://www.w3.org/2001/04/xmlenc#"
DS = "http://www.w3.org/2000/09/xmldsig#"
IDP_ENTITY = "https://idp.evil.test/entity"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    directory = tmp_path_factory.mktemp("amp-keys")
    return {name: idp_signer.make_keypair(directory, name) for name in ("idp", "sp")}


@pytest.fixture
def decryptions(monkeypatch):
    """Every EncryptedData decrypted in this process: ours and pysaml2's both run libxmlsec1's
    EncryptionContext.decrypt (the python-xmlsec type cannot be patched, so its factory is)."""
    calls = []
    real = xmlsec.EncryptionContext

    class Counted:
        def __init__(self, *args, **kwargs):
            self._context = real(*args, **kwargs)

        def decrypt(self, node):
            calls.append(node.tag)
            return self._context.decrypt(node)

    monkeypatch.setattr(xmlsec, "EncryptionContext", Counted)
    return calls


def _shared_key(cert_pem):
    aes = os.urandom(32)
    wrapped = x509.load_pem_x509_certificate(cert_pem.encode()).public_key().encrypt(
        aes, padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None))
    return aes, (f'<xenc:EncryptedKey xmlns:xenc="{XENC}" Id="k"><xenc:EncryptionMethod Algorithm="{XENC}rsa-oaep-mgf1p"/>'
                 f"<xenc:CipherData><xenc:CipherValue>{base64.b64encode(wrapped).decode()}</xenc:CipherValue>"
                 "</xenc:CipherData></xenc:EncryptedKey>")


def _small(aes):
    iv = os.urandom(16)
    block = b"<a/>" + bytes(11) + bytes([12])  # xmlenc padding: last byte = pad length
    encryptor = Cipher(algorithms.AES(aes), modes.CBC(iv)).encryptor()
    value = base64.b64encode(iv + encryptor.update(block) + encryptor.finalize()).decode()
    return (f'<e:EncryptedData xmlns:e="{XENC}" Type="{XENC}Element"><e:EncryptionMethod Algorithm="{XENC}aes256-cbc"/>'
            f'<d:KeyInfo xmlns:d="{DS}"><d:RetrievalMethod Type="{XENC}EncryptedKey" URI="#k"/></d:KeyInfo>'
            f"<e:CipherData><e:CipherValue>{value}</e:CipherValue></e:CipherData></e:EncryptedData>")


def _stuffed_extensions(keys, count=60):
    aes, shared = _shared_key(keys["sp"].cert_pem)
    return f"<samlp:Extensions>{shared}{''.join(_small(aes) for _ in range(count))}</samlp:Extensions>"


def _provider(make_user, keys, provider_id, domain, **extra):
    owner = make_user(email=f"owner@{domain}", email_verified=True)
    entity = f"{ORIGIN}/sp/{provider_id}"
    SsoProvider.objects.create(
        provider_id=provider_id, issuer=entity, domain=domain, user=owner, domain_verified=True,
        saml_config={"issuer": entity, "entryPoint": f"https://idp.{domain}/sso", "cert": keys["idp"].cert_pem,
                     "idpMetadata": {"entityID": IDP_ENTITY}, **extra,
                     "spMetadata": {"encPrivateKey": keys["sp"].key_path.read_text(),
                                    "encryptCert": keys["sp"].cert_pem}})
    return entity


def _started(api, provider_id):
    started = api.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": "/dashboard"})
    query = parse_qs(urlsplit(started.json()["url"]).query)
    return idp_signer.request_id(query["SAMLRequest"][0]), query["RelayState"][0]


def _signed_response(keys, claims, tmp_path, extensions=""):
    encrypted = idp_signer.encrypt(idp_signer.assertion_xml(claims), keys["sp"].cert_path, tmp_path)
    xml = idp_signer.response_xml(claims, assertion=f"<saml:EncryptedAssertion>{encrypted}</saml:EncryptedAssertion>",
                                  extensions=extensions)
    return idp_signer.sign(xml, keys["idp"], claims.response_id, tmp_path)


def _post(api, provider_id, xml, relay_state=None):
    fields = {"SAMLResponse": idp_signer.encode(xml)}
    if relay_state:
        fields["RelayState"] = relay_state
    return api.post(f"{BASE}/sso/saml2/callback/{provider_id}", urlencode(fields),
                    content_type="application/x-www-form-urlencoded")


def test_encrypted_data_outside_the_encrypted_assertion_is_refused_before_any_decryption(
        api, make_user, keys, tmp_path, decryptions):
    entity = _provider(make_user, keys, "evil", "evil.test")
    request_id, relay_state = _started(api, "evil")
    claims = Claims(issuer=IDP_ENTITY, destination=f"{ORIGIN}{BASE}/sso/saml2/callback/evil", audience=entity,
                    in_response_to=request_id, name_id="eve@evil.test", attributes={"email": "eve@evil.test"})
    xml = _signed_response(keys, claims, tmp_path, extensions=_stuffed_extensions(keys))

    response = _post(api, "evil", xml, relay_state)

    assert response.status_code == 302
    assert "error=" in response["Location"]
    assert decryptions == []


def test_a_stale_genuine_response_with_stuffed_extensions_costs_no_decryption(api, make_user, keys, tmp_path,
                                                                              decryptions):
    """No account needed: an old genuine response of someone else's provider (only the encrypted
    Assertion signed), Extensions stuffed with EncryptedData made for the SP's public certificate."""
    entity = _provider(make_user, keys, "acme", "acme.test", wantAssertionsSigned=True)
    claims = Claims(issuer=IDP_ENTITY, destination=f"{ORIGIN}{BASE}/sso/saml2/callback/acme", audience=entity,
                    in_response_to="_long_gone", name_id="eve@acme.test", attributes={"email": "eve@acme.test"})
    signed = idp_signer.sign(idp_signer.assertion_xml(claims), keys["idp"], claims.assertion_id, tmp_path)
    encrypted = idp_signer.encrypt(signed, keys["sp"].cert_path, tmp_path)
    xml = idp_signer.response_xml(claims, assertion=f"<saml:EncryptedAssertion>{encrypted}</saml:EncryptedAssertion>",
                                  extensions=_stuffed_extensions(keys))

    response = _post(api, "acme", xml)

    assert "error=" in response["Location"]
    assert decryptions == []


def test_a_genuine_encrypted_response_is_decrypted_a_bounded_number_of_times(api, make_user, keys, tmp_path,
                                                                             decryptions):
    entity = _provider(make_user, keys, "fine", "fine.test")
    request_id, relay_state = _started(api, "fine")
    claims = Claims(issuer=IDP_ENTITY, destination=f"{ORIGIN}{BASE}/sso/saml2/callback/fine", audience=entity,
                    in_response_to=request_id, name_id="ada@fine.test", attributes={"email": "ada@fine.test"})

    response = _post(api, "fine", _signed_response(keys, claims, tmp_path), relay_state)

    assert "error=" not in response["Location"], response["Location"]
    assert len(decryptions) <= 2  # ours (sso.saml.verified) and pysaml2's


def test_pysaml2_is_given_at_most_one_encrypted_data_to_decrypt(keys, tmp_path):
    """signature.decrypt is what pysaml2 calls until no EncryptedData is left: a document holding
    more than one is refused whole, so that loop decrypts once at most."""
    aes, shared = _shared_key(keys["sp"].cert_pem)
    document = (f'<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="r">'
                f"<samlp:Extensions>{shared}{_small(aes)}{_small(aes)}</samlp:Extensions></samlp:Response>")
    with pytest.raises(signature.Refused):
        signature.decrypt(document, keys["sp"].key_path.read_bytes())
