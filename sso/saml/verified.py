"""One function from a SAML Response's bytes to the elements whose signatures were verified
(security.md I2, issue 12 F1): what is verified is what is used.

``verify_response`` takes the tree parsed once by sso.saml.structure.parse, and

1. applies the structural policy (sso.saml.structure.check): one Response, at most one Assertion
   where SAML puts it, signatures only on those two, no ds:Object, no duplicate ID, no comment;
2. verifies each signature present (Response and/or Assertion) with the configured certificates
   only, each once (sso.saml.signature.verify_element; the answers are remembered for pysaml2,
   which asks about the same bytes next);
3. decrypts an EncryptedAssertion with the SP's key, applies the same policy to the result and
   verifies the decrypted Assertion's own signature, if it has one;
4. requires a valid signature on the Response or the Assertion, and on the Assertion when the
   provider sets ``wantAssertionsSigned``;

and returns a :class:`Verified` holding the Response and the Assertion it checked. The ACS reads the
identity from that Assertion, and refuses the response when pysaml2's parse of the same bytes names
another response ID, assertion ID, Issuer or NameID (``Verified.check_agrees``): two parsers can
no longer pick different elements, and if they ever did, the request fails.
"""

from dataclasses import dataclass

import xmlsec

from sso.saml import signature, structure

NAME_ID = f"{{{structure.SAML}}}NameID"
SUBJECT = f"{{{structure.SAML}}}Subject"


class VerificationRefused(Exception):
    """The response is not used. ``signature_required``: a valid Response signature was found but the
    Assertion's, which ``wantAssertionsSigned`` asks for, was not."""

    def __init__(self, reason, signature_required=False):
        super().__init__(reason)
        self.signature_required = signature_required


@dataclass
class Verified:
    response: object  # the root samlp:Response (lxml element), decrypted in place
    assertion: object  # its one saml:Assertion
    response_signed: bool
    assertion_signed: bool

    @property
    def signed_nodes(self):
        """``(node name, ID)`` of every element whose signature was verified."""
        nodes = []
        if self.response_signed:
            nodes.append((signature.RESPONSE_NODE, self.response.get("ID")))
        if self.assertion_signed:
            nodes.append((signature.ASSERTION_NODE, self.assertion.get("ID")))
        return nodes

    @property
    def name_id(self):
        subject = self.assertion.find(SUBJECT)
        name_id = subject.find(NAME_ID) if subject is not None else None
        return structure.name_id_value(name_id) or ""  # the reader the SLO lookup uses too

    @property
    def session_index(self):
        """The SessionIndex of the Assertion's AuthnStatement (what a LogoutRequest names), or None;
        read as the SLO service reads a LogoutRequest's (sso.saml.structure)."""
        return structure.asserted_session_index(self.assertion)

    @property
    def issuer(self):
        issuer = self.assertion.find(structure.ISSUER)
        return (issuer.text or "").strip() if issuer is not None else ""

    def check_agrees(self, authn):
        """Raise VerificationRefused unless pysaml2's ``authn`` read these very elements."""
        theirs = {
            "response ID": authn.response.id,
            "assertion ID": authn.assertion.id if authn.assertion is not None else None,
            "Issuer": _text(authn.assertion.issuer) if authn.assertion is not None else None,
            "NameID": _text(authn.name_id),
        }
        ours = {"response ID": self.response.get("ID"), "assertion ID": self.assertion.get("ID"),
                "Issuer": self.issuer, "NameID": self.name_id}
        for field, value in ours.items():
            if theirs[field] != value:
                raise VerificationRefused(f"pysaml2 read another {field}: {theirs[field]!r} != {value!r}")


def _text(element):
    return (element.text or "").strip() if element is not None else ""


def verify_response(document, root, cert_bodies, *, decryption_key=None, want_assertions_signed=False):
    """The Verified response; raises VerificationRefused. ``document``: the exact bytes ``root`` was
    parsed from; ``cert_bodies``: the configured signing certificates; ``decryption_key``: the SP's
    unencrypted PEM private key, when it has one."""
    certs = [signature.certificate_pem(body) for body in cert_bodies]
    try:
        structure.check(root)
        response_signed = _verified(root, certs, document)
        assertion = root.find(structure.ASSERTION)
        assertion_signed = assertion is not None and _verified(assertion, certs, document)
        encrypted = root.find(structure.ENCRYPTED_ASSERTION)
        if encrypted is not None:
            assertion = _decrypted(root, encrypted, decryption_key)
            assertion_signed = _verified(assertion, certs, None)
    except (structure.StructureRefused, signature.Refused) as refused:
        raise VerificationRefused(str(refused)) from None
    except xmlsec.Error as error:
        raise VerificationRefused(f"signature or decryption failed: {error}") from None
    if assertion is None:
        raise VerificationRefused("no assertion")
    if not (response_signed or assertion_signed):
        raise VerificationRefused("neither the Response nor the Assertion is signed")
    if want_assertions_signed and not assertion_signed:
        raise VerificationRefused("the Assertion is not signed", signature_required=True)
    return Verified(root, assertion, response_signed, assertion_signed)


def _verified(element, certs, document):
    """True when ``element`` carries a signature that verifies, False when it carries none."""
    if element.find(signature.SIGNATURE) is None:
        return False
    signature.verify_element(element, certs, document)
    return True


def _decrypted(root, encrypted, key_pem):
    """The plaintext Assertion of the EncryptedAssertion, checked as a received one would be."""
    data = encrypted.find(signature.ENCRYPTED_DATA)
    if key_pem is None or data is None:
        raise signature.Refused("an EncryptedAssertion, but no SP decryption key or no EncryptedData")
    signature.decrypt_element(data, key_pem)
    structure.check(root, decrypted=True)
    assertion = encrypted.find(structure.ASSERTION)
    if assertion is None or len(encrypted) != 1 + len(encrypted.findall(signature.ENCRYPTED_KEY)):
        raise signature.Refused("the EncryptedAssertion did not decrypt to one Assertion")
    return assertion
