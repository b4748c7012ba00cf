"""In-process decryption of encrypted assertions (sso/saml/signature.py ``decrypt``).

Every EncryptedData here is made by the xmlsec1 binary for the SP's certificate, as an IdP makes it.
The samlify interop tests (test_sp_login.py) decrypt through the ACS; these pin the edges.
"""

import pytest
import xmlsec

from sso.saml import signature
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import SAML, SAMLP

RETRIEVAL = "http://www.w3.org/2001/04/xmlenc#EncryptedKey"


@pytest.fixture
def assertion():
    return idp_signer.assertion_xml(idp_signer.sample_claims())


def response_with(encrypted_assertion_content):
    return (f'<samlp:Response xmlns:samlp="{SAMLP}" xmlns:saml="{SAML}" ID="_r" Version="2.0" '
            f'IssueInstant="2026-01-01T00:00:00Z"><saml:EncryptedAssertion>{encrypted_assertion_content}'
            "</saml:EncryptedAssertion></samlp:Response>")


def key_outside(encrypted, uri="#ek-1"):
    """Shibboleth's shape: the EncryptedKey beside the EncryptedData, found by a RetrievalMethod."""
    start, end = encrypted.index("<xenc:EncryptedKey>"), encrypted.index("</xenc:EncryptedKey>") + 20
    key = encrypted[start:end].replace("<xenc:EncryptedKey>",
                                       f'<xenc:EncryptedKey xmlns:xenc="{idp_signer.XENC}" Id="ek-1">')
    method = f'<ds:RetrievalMethod URI="{uri}" Type="{RETRIEVAL}"/>'
    return encrypted[:start] + method + encrypted[end:] + key


def test_the_assertion_is_decrypted_with_the_sp_key(xmlsec_keys, assertion, tmp_path):
    encrypted = idp_signer.encrypt(assertion, xmlsec_keys["sp"].cert_path, tmp_path)
    assert "ada@acme.com" not in encrypted
    decrypted = signature.decrypt(response_with(encrypted), xmlsec_keys["sp"].key_path.read_bytes())
    assert "ada@acme.com" in decrypted and "EncryptedData" not in decrypted
    assert "<saml:EncryptedAssertion><saml:Assertion" in decrypted


def test_a_key_outside_the_encrypted_data_is_found_by_its_id(xmlsec_keys, assertion, tmp_path):
    encrypted = key_outside(idp_signer.encrypt(assertion, xmlsec_keys["sp"].cert_path, tmp_path))
    decrypted = signature.decrypt(response_with(encrypted), xmlsec_keys["sp"].key_path.read_bytes())
    assert "ada@acme.com" in decrypted


def test_another_key_cannot_decrypt(xmlsec_keys, assertion, tmp_path):
    encrypted = idp_signer.encrypt(assertion, xmlsec_keys["sp"].cert_path, tmp_path)
    with pytest.raises(xmlsec.Error):
        signature.decrypt(response_with(encrypted), xmlsec_keys["other"].key_path.read_bytes())


def test_a_retrieval_method_outside_the_document_is_refused(xmlsec_keys, assertion, tmp_path):
    outside = tmp_path / "key.xml"
    outside.write_text("<x/>")
    encrypted = key_outside(idp_signer.encrypt(assertion, xmlsec_keys["sp"].cert_path, tmp_path), uri=outside.as_uri())
    with pytest.raises(signature.Refused):
        signature.decrypt(response_with(encrypted), xmlsec_keys["sp"].key_path.read_bytes())


def test_a_cipher_reference_is_refused(xmlsec_keys, assertion, tmp_path):
    ciphertext = tmp_path / "cipher.bin"
    ciphertext.write_bytes(b"\0" * 64)
    encrypted = idp_signer.encrypt(assertion, xmlsec_keys["sp"].cert_path, tmp_path)
    last = encrypted.rindex("<xenc:CipherData>")
    referenced = encrypted[:last] + f'<xenc:CipherData><xenc:CipherReference URI="{ciphertext.as_uri()}"/>' \
        "</xenc:CipherData></xenc:EncryptedData>"
    with pytest.raises(signature.Refused):
        signature.decrypt(response_with(referenced), xmlsec_keys["sp"].key_path.read_bytes())


def test_a_doctype_is_refused_before_decryption(xmlsec_keys, assertion, tmp_path):
    encrypted = idp_signer.encrypt(assertion, xmlsec_keys["sp"].cert_path, tmp_path)
    with pytest.raises(signature.Refused):
        signature.decrypt('<!DOCTYPE r [<!ENTITY e "x">]>' + response_with(encrypted),
                          xmlsec_keys["sp"].key_path.read_bytes())


def test_a_document_without_encrypted_data_is_refused(xmlsec_keys, assertion):
    with pytest.raises(signature.Refused):
        signature.decrypt(response_with(assertion), xmlsec_keys["sp"].key_path.read_bytes())


def test_pysaml2_decryption_failures_are_its_decrypt_error(xmlsec_keys, assertion, tmp_path):
    from saml2.sigver import DecryptError

    encrypted = idp_signer.encrypt(assertion, xmlsec_keys["sp"].cert_path, tmp_path)
    backend = signature.InProcessVerifier("/usr/bin/xmlsec1")
    with pytest.raises(DecryptError):
        backend.decrypt(response_with(encrypted), str(xmlsec_keys["other"].key_path))
