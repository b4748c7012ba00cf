"""The in-process signature verifier (sso/saml/signature.py) on its own.

Every document is signed by the xmlsec1 binary, so a refusal here is the verifier's policy, not a
bad signature: the binary signs remote references and XSLT transforms, which this verifier refuses.
The ACS-level attacks (wrapping, foreign KeyInfo, tampering) are in test_attacks.py.
"""

import pytest

from sso.saml import signature
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import DS, SAML, SAMLP

RESPONSE = f"{SAMLP}:Response"
ASSERTION = f"{SAML}:Assertion"
EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#"
ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"


@pytest.fixture
def claims():
    return idp_signer.sample_claims()


def template(uri, transforms=(ENVELOPED, EXC_C14N)):
    steps = "".join(f'<ds:Transform Algorithm="{algorithm}"/>' for algorithm in transforms)
    return (
        f'<ds:Signature xmlns:ds="{DS}"><ds:SignedInfo>'
        f'<ds:CanonicalizationMethod Algorithm="{EXC_C14N}"/>'
        f'<ds:SignatureMethod Algorithm="{idp_signer.RSA_SHA256}"/>'
        f'<ds:Reference URI="{uri}"><ds:Transforms>{steps}</ds:Transforms>'
        f'<ds:DigestMethod Algorithm="{idp_signer.SHA256}"/><ds:DigestValue></ds:DigestValue></ds:Reference>'
        f"</ds:SignedInfo><ds:SignatureValue></ds:SignatureValue></ds:Signature>")


def signed_response(claims, xmlsec_keys, tmp_path, **options):
    return idp_signer.sign(idp_signer.response_xml(claims), xmlsec_keys["idp"], claims.response_id, tmp_path, **options)


def test_a_genuine_signature_by_the_configured_certificate_verifies(claims, xmlsec_keys, tmp_path):
    xml = signed_response(claims, xmlsec_keys, tmp_path)
    assert signature.verify(xml, xmlsec_keys["idp"].cert_pem, RESPONSE, claims.response_id)


def test_a_signature_by_another_certificate_does_not_verify(claims, xmlsec_keys, tmp_path):
    xml = signed_response(claims, xmlsec_keys, tmp_path)
    assert not signature.verify(xml, xmlsec_keys["other"].cert_pem, RESPONSE, claims.response_id)


def test_a_changed_signed_element_does_not_verify(claims, xmlsec_keys, tmp_path):
    xml = signed_response(claims, xmlsec_keys, tmp_path).replace("ada@acme.com", "eve@acme.com")
    assert not signature.verify(xml, xmlsec_keys["idp"].cert_pem, RESPONSE, claims.response_id)


def test_the_id_is_only_looked_up_on_elements_of_the_signed_name(claims, xmlsec_keys, tmp_path):
    xml = signed_response(claims, xmlsec_keys, tmp_path)
    assert not signature.verify(xml, xmlsec_keys["idp"].cert_pem, ASSERTION, claims.response_id)


def test_a_document_with_two_signed_elements_of_the_same_id_is_refused(claims, xmlsec_keys, tmp_path):
    xml = signed_response(claims, xmlsec_keys, tmp_path)
    twice = xml.replace("</samlp:Response>", f'<samlp:Response ID="{claims.response_id}"/></samlp:Response>')
    assert not signature.verify(twice, xmlsec_keys["idp"].cert_pem, RESPONSE, claims.response_id)


def test_a_signature_that_is_not_the_elements_own_child_is_refused(claims, xmlsec_keys, tmp_path):
    nested = f"<samlp:Extensions>{template(f'#{claims.response_id}')}</samlp:Extensions>"
    xml = signed_response(claims, xmlsec_keys, tmp_path, template=nested)
    assert "<samlp:Extensions><ds:Signature" in xml
    assert not signature.verify(xml, xmlsec_keys["idp"].cert_pem, RESPONSE, claims.response_id)


def test_a_reference_to_a_file_is_refused_although_the_binary_signed_it(claims, xmlsec_keys, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("signed content outside the document")
    xml = signed_response(claims, xmlsec_keys, tmp_path, template=template(outside.as_uri(), transforms=()))
    assert f'URI="{outside.as_uri()}"' in xml
    assert not signature.verify(xml, xmlsec_keys["idp"].cert_pem, RESPONSE, claims.response_id)


def test_an_xslt_transform_is_refused_although_the_binary_signed_it(claims, xmlsec_keys, tmp_path):
    xslt = ('<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xslt-19991116">'
            '<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" version="1.0">'
            '<xsl:template match="/">x</xsl:template></xsl:stylesheet></ds:Transform>')
    signed = template(f"#{claims.response_id}").replace(
        f'<ds:Transform Algorithm="{EXC_C14N}"/>', f'<ds:Transform Algorithm="{EXC_C14N}"/>{xslt}')
    xml = signed_response(claims, xmlsec_keys, tmp_path, template=signed)
    assert "REC-xslt" in xml
    assert not signature.verify(xml, xmlsec_keys["idp"].cert_pem, RESPONSE, claims.response_id)


def test_a_doctype_is_refused_before_verification(claims, xmlsec_keys, tmp_path):
    xml = signed_response(claims, xmlsec_keys, tmp_path)
    assert not signature.verify('<!DOCTYPE r [<!ENTITY e "x">]>' + xml, xmlsec_keys["idp"].cert_pem, RESPONSE,
                                claims.response_id)


def test_text_that_is_not_xml_is_refused(xmlsec_keys):
    assert not signature.verify("not xml", xmlsec_keys["idp"].cert_pem, RESPONSE, "_x")
