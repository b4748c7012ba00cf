"""Safe XML for SAML: no DTD, no entities, no network (sso.md §10 rule 7), and the counts and values
the ACS checks on the raw document before and after pysaml2 verifies it.

defusedxml's ElementTree skips comments and joins the text around them, so an element's text is
every text node concatenated with comments skipped, exactly what exclusive c14n signs (rule 3).
"""

from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeET

SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol"
SAML = "urn:oasis:names:tc:SAML:2.0:assertion"
DS = "http://www.w3.org/2000/09/xmldsig#"
XENC = "http://www.w3.org/2001/04/xmlenc#"
MD = "urn:oasis:names:tc:SAML:2.0:metadata"


def q(namespace, name):
    return f"{{{namespace}}}{name}"


class XmlRefused(Exception):
    """Not parseable, or carries a DOCTYPE/entity: never processed further."""


def parse(text):
    """The root Element of ``text`` (str or bytes); raises XmlRefused."""
    if isinstance(text, bytes):
        probe = text[:4096].decode("utf-8", "replace")
    else:
        probe = text[:4096]
    if "<!DOCTYPE" in probe.upper() or "<!ENTITY" in probe.upper():
        raise XmlRefused("DOCTYPE")
    try:
        return SafeET.fromstring(text, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except (DefusedXmlException, SafeET.ParseError, ValueError, TypeError) as exc:
        raise XmlRefused(str(exc)) from None


def assertion_count(root):
    """Assertion and EncryptedAssertion elements anywhere, Extensions and Advice included (rule 4)."""
    return sum(1 for element in root.iter()
               if element.tag in (q(SAML, "Assertion"), q(SAML, "EncryptedAssertion")))


def text_of(element):
    """The whole text content of ``element`` (comments already dropped by the parser), stripped."""
    return "".join(element.itertext()).strip() if element is not None else ""


def algorithms(root):
    """``(signature, digest, key_transport, data_encryption)`` URIs used anywhere in the document."""
    found = ([], [], [], [])
    for element in root.iter():
        algorithm = element.get("Algorithm")
        if not algorithm:
            continue
        if element.tag == q(DS, "SignatureMethod"):
            found[0].append(algorithm)
        elif element.tag == q(DS, "DigestMethod"):
            found[1].append(algorithm)
        elif element.tag == q(XENC, "EncryptionMethod"):
            # EncryptedKey's method transports the key; EncryptedData's encrypts the payload.
            found[3].append(algorithm)
    for key in root.iter(q(XENC, "EncryptedKey")):
        method = key.find(q(XENC, "EncryptionMethod"))
        if method is not None and method.get("Algorithm") in found[3]:
            found[3].remove(method.get("Algorithm"))
            found[2].append(method.get("Algorithm"))
    return found
