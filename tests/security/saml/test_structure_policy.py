"""I2: the one verifier (sso.saml.verified) on its own: the structural policy, the Reference rule,
the memo pysaml2 reads, and the cross-check of what pysaml2 read (issue 12 F1).

Documents are genuine responses signed by the xmlsec1 binary; each test changes one thing.
"""

from types import SimpleNamespace

import pytest

from sso.saml import signature, structure, verified
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import DS, SAML

EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#"
ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    idp_signer.require_binaries()
    return idp_signer.make_keypair(tmp_path_factory.mktemp("policy-keys"), "idp")


@pytest.fixture
def claims():
    return idp_signer.sample_claims()


def sign(xml, key, element_id, tmp_path, **options):
    return idp_signer.sign(xml, key, element_id, tmp_path, **options)


def verify(xml, key, **options):
    document = xml.encode()
    return verified.verify_response(document, structure.parse(document), [key.cert_body], **options)


def refused(xml, key, **options):
    with pytest.raises(verified.VerificationRefused):
        verify(xml, key, **options)


def response_signed(claims, key, tmp_path):
    return sign(idp_signer.response_xml(claims), key, claims.response_id, tmp_path)


def assertion_signed(claims, key, tmp_path):
    return sign(idp_signer.response_xml(claims), key, claims.assertion_id, tmp_path)


def empty_reference_template():
    return (f'<ds:Signature xmlns:ds="{DS}"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="{EXC_C14N}"/>'
            f'<ds:SignatureMethod Algorithm="{idp_signer.RSA_SHA256}"/><ds:Reference URI=""><ds:Transforms>'
            f'<ds:Transform Algorithm="{ENVELOPED}"/><ds:Transform Algorithm="{EXC_C14N}"/></ds:Transforms>'
            f'<ds:DigestMethod Algorithm="{idp_signer.SHA256}"/><ds:DigestValue></ds:DigestValue></ds:Reference>'
            f"</ds:SignedInfo><ds:SignatureValue></ds:SignatureValue></ds:Signature>")


def test_a_signed_response_is_verified_and_its_assertion_handed_back(claims, key, tmp_path):
    result = verify(response_signed(claims, key, tmp_path), key)
    assert (result.response_signed, result.assertion_signed) == (True, False)
    assert result.assertion.get("ID") == claims.assertion_id and result.name_id == claims.name_id


def test_an_empty_reference_on_the_root_response_is_unambiguous_and_accepted(claims, key, tmp_path):
    xml = sign(idp_signer.response_xml(claims), key, claims.response_id, tmp_path, template=empty_reference_template())
    assert 'URI=""' in xml
    assert verify(xml, key).response_signed


def test_an_empty_reference_on_the_assertion_is_refused(claims, key, tmp_path):
    xml = sign(idp_signer.response_xml(claims), key, claims.assertion_id, tmp_path, template=empty_reference_template())
    refused(xml, key)


def test_an_unsigned_response_is_refused(claims, key):
    refused(idp_signer.response_xml(claims), key)


def test_a_signed_response_with_an_unsigned_assertion_is_refused_when_assertions_must_be_signed(
        claims, key, tmp_path):
    with pytest.raises(verified.VerificationRefused) as caught:
        verify(response_signed(claims, key, tmp_path), key, want_assertions_signed=True)
    assert caught.value.signature_required


def test_a_signature_by_another_key_is_refused(claims, key, tmp_path):
    other = idp_signer.make_keypair(tmp_path / "other", "other")
    refused(response_signed(claims, other, tmp_path), key)


def test_an_empty_ds_object_anywhere_is_refused(claims, key, tmp_path):
    xml = assertion_signed(claims, key, tmp_path).replace(
        "<samlp:Status>", f'<samlp:Extensions><ds:Object xmlns:ds="{DS}"/></samlp:Extensions><samlp:Status>', 1)
    refused(xml, key)


def test_a_processing_instruction_is_refused(claims, key, tmp_path):
    xml = assertion_signed(claims, key, tmp_path).replace("<samlp:Status>", "<?evil x?><samlp:Status>", 1)
    refused(xml, key)


def test_a_comment_before_the_response_is_refused(claims, key, tmp_path):
    refused("<!-- hello -->" + response_signed(claims, key, tmp_path), key)


def test_an_xml_id_repeating_the_signed_id_is_refused(claims, key, tmp_path):
    xml = assertion_signed(claims, key, tmp_path).replace(
        "<samlp:Status>", f'<samlp:Extensions><x:T xmlns:x="urn:x" xml:id="{claims.assertion_id}"/>'
                          "</samlp:Extensions><samlp:Status>", 1)
    refused(xml, key)


def test_an_encrypted_assertion_holding_a_plaintext_assertion_is_refused(claims, key, tmp_path):
    xml = response_signed(claims, key, tmp_path)
    start, end = xml.index("<saml:Assertion "), xml.index("</saml:Assertion>") + len("</saml:Assertion>")
    wrapped = xml[:start] + f"<saml:EncryptedAssertion>{xml[start:end]}</saml:EncryptedAssertion>" + xml[end:]
    refused(wrapped, key)


def test_two_signatures_on_the_response_are_refused(claims, key, tmp_path):
    xml = response_signed(claims, key, tmp_path)
    start = xml.index("<ds:Signature")
    signature_text = xml[start:xml.index("</ds:Signature>") + len("</ds:Signature>")]
    refused(xml.replace(signature_text, signature_text + signature_text, 1), key)


def test_a_reference_to_the_assertion_from_the_response_signature_is_refused(claims, key, tmp_path):
    xml = sign(idp_signer.response_xml(claims), key, claims.response_id, tmp_path,
               template=idp_signer.signature_template(claims.assertion_id))
    refused(xml, key)


def test_pysaml2s_question_about_the_same_bytes_is_answered_from_the_one_verification(
        claims, key, tmp_path, monkeypatch):
    xml = response_signed(claims, key, tmp_path)
    verify(xml, key)
    monkeypatch.setattr(signature, "verify", lambda *a: pytest.fail("the signature was verified twice"))
    backend = signature.InProcessVerifier.__new__(signature.InProcessVerifier)
    cert_file = tmp_path / "cert.pem"
    cert_file.write_text(key.cert_pem)
    assert backend.validate_signature(xml, str(cert_file), "pem", signature.RESPONSE_NODE, claims.response_id)


def test_the_memo_never_answers_for_other_bytes(claims, key, tmp_path):
    xml = response_signed(claims, key, tmp_path)
    verify(xml, key)
    backend = signature.InProcessVerifier.__new__(signature.InProcessVerifier)
    cert_file = tmp_path / "cert.pem"
    cert_file.write_text(key.cert_pem)
    tampered = xml.replace(claims.name_id, "eve@acme.com")
    assert not backend.validate_signature(tampered, str(cert_file), "pem", signature.RESPONSE_NODE, claims.response_id)


def _authn(response_id, assertion_id, issuer, name_id):
    text = SimpleNamespace
    return text(response=text(id=response_id),
                assertion=text(id=assertion_id, issuer=text(text=issuer)), name_id=text(text=name_id))


def test_pysaml2_reading_the_verified_elements_agrees(claims, key, tmp_path):
    result = verify(response_signed(claims, key, tmp_path), key)
    result.check_agrees(_authn(claims.response_id, claims.assertion_id, claims.issuer, claims.name_id))


@pytest.mark.parametrize("field", ["response_id", "assertion_id", "issuer", "name_id"])
def test_pysaml2_reading_another_element_refuses_the_response(claims, key, tmp_path, field):
    result = verify(response_signed(claims, key, tmp_path), key)
    values = {"response_id": claims.response_id, "assertion_id": claims.assertion_id, "issuer": claims.issuer,
              "name_id": claims.name_id, field: "_other"}
    with pytest.raises(verified.VerificationRefused):
        result.check_agrees(_authn(**values))


def test_a_foreign_assertion_in_the_saml_namespace_is_counted_wherever_its_prefix_points(claims, key, tmp_path):
    xml = assertion_signed(claims, key, tmp_path).replace(
        "<samlp:Status>", f'<samlp:Extensions><a:Assertion xmlns:a="{SAML}"/></samlp:Extensions><samlp:Status>', 1)
    refused(xml, key)
