"""XML signature checks and decryption in this process (python-xmlsec, the libxmlsec1 library)
instead of one ``xmlsec1`` child process per signature or EncryptedData.

pysaml2's xmlsec1 backend starts the binary for every signature it checks: about 33 ms of a 50 ms
ACS request went to process start-up (bench/README.md). The library is the same code as the
binary, so this backend keeps the binary's semantics and adds a few refusals of its own:

- as ``--id-attr:ID <node_name> --node-id <id>``: the ``ID`` attribute is registered only on
  elements named ``node_name``, and the signature checked is the first ``ds:Signature`` inside the
  element carrying ``node_id``. Here that signature must also be the element's own child
  (enveloped), and a second element of that name with the same ID refuses the document;
- as ``--enabled-reference-uris empty,same-doc``: a Reference URI must be empty or ``#...``;
  nothing is ever fetched;
- as ``--enabled-key-data raw-x509-cert --pubkey-cert-pem <file>``: the only key is the configured
  certificate; a KeyInfo in the document is never used to find one;
- only the transforms the SAML signature profile allows (enveloped signature and the c14n
  methods) run inside a Reference; XSLT, XPath and XPointer are refused by the library.

Decryption (``decrypt``) is ``xmlsec1 --decrypt --privkey-pem <key> --id-attr:Id EncryptedKey``:
the first EncryptedData of the document is replaced by its plaintext, the only key is the SP's, and a
RetrievalMethod must point into the document (Shibboleth puts the EncryptedKey beside the data)
and the ciphertext must be there too (no CipherReference).

pysaml2 still insists that the binary exists (its security context checks the path), so sso.E010
stays. The parsed certificate is cached per PEM text; nothing else outlives a call.
"""

import functools
import logging

import xmlsec
from lxml import etree
from saml2.sigver import CryptoBackendXmlSec1, DecryptError

logger = logging.getLogger("sso")

DS = "http://www.w3.org/2000/09/xmldsig#"
XENC = "http://www.w3.org/2001/04/xmlenc#"
SIGNATURE = f"{{{DS}}}Signature"
REFERENCE = f"{{{DS}}}Reference"
RETRIEVAL_METHOD = f"{{{DS}}}RetrievalMethod"
ENCRYPTED_DATA = f"{{{XENC}}}EncryptedData"
ENCRYPTED_KEY = f"{{{XENC}}}EncryptedKey"
CIPHER_REFERENCE = f"{{{XENC}}}CipherReference"

REFERENCE_TRANSFORMS = (
    xmlsec.constants.TransformEnveloped,
    xmlsec.constants.TransformExclC14N,
    xmlsec.constants.TransformExclC14NWithComments,
    xmlsec.constants.TransformInclC14N,
    xmlsec.constants.TransformInclC14NWithComments,
    xmlsec.constants.TransformInclC14N11,
    xmlsec.constants.TransformInclC14N11WithComments,
    # Digest methods are transforms of the Reference too; which of them are acceptable is the
    # algorithm policy's call (sso.saml.algorithms), applied to the whole document afterwards.
    xmlsec.constants.TransformSha1,
    xmlsec.constants.TransformSha224,
    xmlsec.constants.TransformSha256,
    xmlsec.constants.TransformSha384,
    xmlsec.constants.TransformSha512,
)

# No DTD is loaded, no entity expanded, nothing fetched; comments stay (c14n decides about them).
_PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False,
                          remove_blank_text=False, remove_comments=False, remove_pis=False)


class Refused(Exception):
    """The document is not one this verifier checks (its reason is logged, the caller sees False)."""


@functools.lru_cache(maxsize=64)
def _certificate_key(pem):
    return xmlsec.Key.from_memory(pem, xmlsec.constants.KeyDataFormatCertPem)


def _split(node_name):
    """``urn:...:protocol:Response`` -> (namespace, local name), as xmlsec1's ``--id-attr`` reads it."""
    namespace, _, local = node_name.rpartition(":")
    return namespace, local


def _parse(signed_text):
    if isinstance(signed_text, str):
        signed_text = signed_text.encode("utf-8")
    try:
        tree = etree.fromstring(signed_text, _PARSER).getroottree()
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise Refused(f"unparseable: {exc}") from None
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        raise Refused("DOCTYPE")
    return tree.getroot()


def _signed_node(root, node_name, node_id):
    namespace, local = _split(node_name)
    named = [element for element in root.iter(f"{{{namespace}}}{local}") if element.get("ID") is not None]
    carrying = [element for element in named if element.get("ID") == node_id]
    if len(carrying) != 1:
        raise Refused(f"{len(carrying)} {local} elements with ID {node_id!r}")
    if len({element.get("ID") for element in named}) != len(named):
        raise Refused(f"duplicate {local} IDs")
    return named, carrying[0]


def _enveloped_signature(node):
    signature = next(node.iter(SIGNATURE), None)
    if signature is None or signature.getparent() is not node:
        raise Refused("the first Signature inside the signed element is not its own child")
    for reference in signature.iter(REFERENCE):
        uri = reference.get("URI")
        if uri is None or (uri and not uri.startswith("#")):
            raise Refused(f"Reference URI {uri!r} is neither empty nor same-document")
    return signature


def verify(signed_text, cert_pem, node_name, node_id):
    """True when the ``node_name`` element with ``ID`` ``node_id`` carries a valid enveloped
    signature by the certificate ``cert_pem``; False (and a log line) otherwise."""
    try:
        root = _parse(signed_text)
        named, node = _signed_node(root, node_name, node_id)
        signature = _enveloped_signature(node)
        context = xmlsec.SignatureContext()
        for element in named:
            context.register_id(element, "ID")
        for transform in REFERENCE_TRANSFORMS:
            context.enable_reference_transform(transform)
        context.key = _certificate_key(cert_pem)
        context.verify(signature)
    except Refused as refused:
        logger.info("SAML signature refused before verification: %s", refused)
        return False
    except xmlsec.Error as error:
        logger.info("SAML signature does not verify: %s", error)
        return False
    return True


def decrypt(encrypted_text, key_pem):
    """The document with its first EncryptedData replaced by the plaintext, as ``xmlsec1 --decrypt
    --privkey-pem <key> --id-attr:Id EncryptedKey`` writes it; raises Refused or xmlsec.Error."""
    root = _parse(encrypted_text)
    data = next(root.iter(ENCRYPTED_DATA), None)
    if data is None:
        raise Refused("no EncryptedData")
    if next(root.iter(CIPHER_REFERENCE), None) is not None:
        raise Refused("CipherReference: the ciphertext must be in the document")
    for method in root.iter(RETRIEVAL_METHOD):
        if not (method.get("URI") or "").startswith("#"):
            raise Refused(f"RetrievalMethod URI {method.get('URI')!r} is not same-document")
    for encrypted_key in root.iter(ENCRYPTED_KEY):
        if encrypted_key.get("Id"):
            xmlsec.tree.add_ids(encrypted_key, ["Id"])
    manager = xmlsec.KeysManager()
    manager.add_key(xmlsec.Key.from_memory(key_pem, xmlsec.constants.KeyDataFormatPem))
    xmlsec.EncryptionContext(manager).decrypt(data)
    return etree.tostring(root, encoding="unicode")


class InProcessVerifier(CryptoBackendXmlSec1):
    """pysaml2's xmlsec1 backend with ``validate_signature`` and ``decrypt`` done in this process."""

    def decrypt(self, enctext, key_file):
        with open(key_file, "rb") as handle:
            key_pem = handle.read()
        try:
            return decrypt(enctext, key_pem)
        except (Refused, xmlsec.Error) as error:
            logger.info("SAML EncryptedData not decrypted: %s", error)
            raise DecryptError(str(error)) from None

    def validate_signature(self, signedtext, cert_file, cert_type, node_name, node_id):
        if cert_type != "pem" or not node_id:
            return False
        with open(cert_file, encoding="ascii") as handle:
            cert_pem = handle.read()
        return verify(signedtext, cert_pem, node_name, node_id)
