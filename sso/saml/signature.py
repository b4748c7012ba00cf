"""XML signature checks and decryption in this process (python-xmlsec, the libxmlsec1 library)
instead of one ``xmlsec1`` child process per signature or EncryptedData.

pysaml2's xmlsec1 backend starts the binary for every signature it checks: about 33 ms of a 50 ms
ACS request went to process start-up (bench/README.md). The library is the same code as the
binary; this module checks one element's own signature, in a document that already has the one
shape of sso.saml.structure (no second Response or Assertion, no duplicate ID, signatures only on
the Response and its Assertion). tests/security/saml/test_differential.py checks that the binary
(``xmlsec1 --verify --id-attr:ID <node> --node-id <id> --pubkey-cert-pem <cert>``) accepts every
element this module accepts. On top of the binary:

- the signature is the element's own child, its SignedInfo has exactly one Reference, and that
  Reference is ``#`` + the element's own ID (empty only for the root, where it is unambiguous);
  only that element's ID is registered, so the Reference cannot resolve anywhere else;
- the only key is a configured certificate; a KeyInfo in the document is never used to find one;
- only the transforms the SAML signature profile allows (enveloped signature and the c14n
  methods) run inside a Reference; XSLT, XPath and XPointer are refused by the library.

sso.saml.verified.verify_response checks every signature of a response once, before pysaml2 sees
it, and records what passed in a small per-process memo keyed by the exact bytes, the node and the
certificate. pysaml2 then asks ``InProcessVerifier.validate_signature`` about the same bytes and
gets the recorded answer; any other question (other bytes, node or certificate) gets the full
check. The memo only ever holds results of the full check, so it cannot accept anything the full
check refuses.

Decryption (``decrypt``) is ``xmlsec1 --decrypt --privkey-pem <key> --id-attr:Id EncryptedKey``:
the first EncryptedData of the document is replaced by its plaintext, the only key is the SP's, and a
RetrievalMethod must point into the document (Shibboleth puts the EncryptedKey beside the data)
and the ciphertext must be there too (no CipherReference).

pysaml2 still insists that the binary exists (its security context checks the path), so sso.E010
stays. The parsed certificate is cached per PEM text.
"""

import functools
import hashlib
import logging
import textwrap

import xmlsec
from lxml import etree
from saml2.sigver import CryptoBackendXmlSec1, DecryptError

from sso.saml import structure
from sso.saml.structure import ENCRYPTED_DATA, ENCRYPTED_KEY, REFERENCE, SIGNATURE, SIGNED_INFO
from sso.saml.xml import DS, XENC

logger = logging.getLogger("sso")

RETRIEVAL_METHOD = f"{{{DS}}}RetrievalMethod"
CIPHER_REFERENCE = f"{{{XENC}}}CipherReference"
RESPONSE_NODE = f"{structure.SAMLP}:Response"
ASSERTION_NODE = f"{structure.SAML}:Assertion"

# A Reference of the SAML signature profile (SAML core §5.4.4): the enveloped-signature transform,
# then at most one exclusive canonicalization. Inclusive c14n is refused (I6): it renders every
# namespace in scope on every element, so a few KiB of declarations over a few thousand elements
# cost seconds to minutes of CPU before any signature value is compared (second attack pass on
# issue 12); a chain of transforms canonicalises the document once per link. IdPs sign this way
# (samlify, SimpleSAMLphp, ADFS, Entra ID, Okta, Shibboleth).
ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
EXCLUSIVE_C14N = ("http://www.w3.org/2001/10/xml-exc-c14n#", "http://www.w3.org/2001/10/xml-exc-c14n#WithComments")
TRANSFORM = f"{{{DS}}}Transform"
TRANSFORMS = f"{{{DS}}}Transforms"

REFERENCE_TRANSFORMS = (
    xmlsec.constants.TransformEnveloped,
    xmlsec.constants.TransformExclC14N,
    xmlsec.constants.TransformExclC14NWithComments,
    # Digest methods are transforms of the Reference too; which of them are acceptable is the
    # algorithm policy's call (sso.saml.algorithms), applied to the whole document afterwards.
    xmlsec.constants.TransformSha1,
    xmlsec.constants.TransformSha224,
    xmlsec.constants.TransformSha256,
    xmlsec.constants.TransformSha384,
    xmlsec.constants.TransformSha512,
)

# (sha256 of the document, node name, node ID, certificate PEM) -> result of the full check.
_MEMO = {}
_MEMO_LIMIT = 256


class Refused(Exception):
    """The document is not one this verifier checks (its reason is logged, the caller sees False)."""


@functools.lru_cache(maxsize=64)
def _certificate_key(pem):
    return xmlsec.Key.from_memory(pem, xmlsec.constants.KeyDataFormatCertPem)


def _as_bytes(text):
    return text.encode("utf-8") if isinstance(text, str) else bytes(text)


@functools.lru_cache(maxsize=64)
def certificate_body(pem):
    """The base64 body of a PEM certificate, however it is wrapped (pysaml2 re-wraps it)."""
    return "".join(line.strip() for line in str(pem).splitlines() if "-----" not in line)


@functools.lru_cache(maxsize=64)
def certificate_pem(body):
    lines = textwrap.wrap(certificate_body(body), 64)
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"


def _memo_key(document, node_name, node_id, cert_pem):
    return hashlib.sha256(document).digest(), node_name, node_id, certificate_body(cert_pem)


def remember(document, node_name, node_id, cert_pem, passed):
    """Record the full check's answer for these exact bytes (only the full check calls this)."""
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[_memo_key(_as_bytes(document), node_name, node_id, cert_pem)] = passed


def node_name_of(element):
    return RESPONSE_NODE if element.tag == structure.RESPONSE else ASSERTION_NODE


def enveloped_signature(element, root):
    """The element's own ds:Signature, whose one Reference is ``#`` + its ID (or empty for the root)."""
    signatures = element.findall(SIGNATURE)
    if len(signatures) != 1:
        raise Refused(f"{len(signatures)} signatures on the signed element")
    signature = signatures[0]
    references = signature.findall(f"{SIGNED_INFO}/{REFERENCE}")
    if len(references) != 1 or len(list(signature.iter(REFERENCE))) != 1:
        raise Refused("a signature must have exactly one Reference")
    element_id, uri = element.get("ID"), references[0].get("URI")
    if not element_id:
        raise Refused("the signed element has no ID")
    if uri != f"#{element_id}" and not (uri == "" and element is root):
        raise Refused(f"Reference URI {uri!r} is not the signed element's own ID {element_id!r}")
    _check_transforms(references[0])
    return signature


def _check_transforms(reference):
    """The profile's transforms only, checked before libxmlsec1 runs any of them (see ENVELOPED)."""
    wrappers = reference.findall(TRANSFORMS)
    transforms = [transform.get("Algorithm") for transform in wrappers[0]] if wrappers else []
    if len(wrappers) != 1 or len(wrappers[0]) != len(wrappers[0].findall(TRANSFORM)) \
            or not transforms or transforms[0] != ENVELOPED or len(transforms) > 2 \
            or (len(transforms) == 2 and transforms[1] not in EXCLUSIVE_C14N):
        raise Refused(f"Reference transforms {transforms!r} are not enveloped-signature + exclusive c14n")


def verify_element(element, cert_pems, document=None):
    """The PEM of the configured certificate that verifies ``element``'s own enveloped signature.

    ``element`` belongs to a tree that passed sso.saml.structure.check. Raises Refused or
    xmlsec.Error. With ``document`` (the exact bytes the tree was parsed from), every answer is
    remembered for ``validate_signature``.
    """
    root = element.getroottree().getroot()
    signature = enveloped_signature(element, root)
    node_name, node_id = node_name_of(element), element.get("ID")
    last_error = None
    for cert_pem in cert_pems:
        context = xmlsec.SignatureContext()
        context.register_id(element, "ID")  # this element only: the Reference can resolve nowhere else
        for transform in REFERENCE_TRANSFORMS:
            context.enable_reference_transform(transform)
        context.key = _certificate_key(cert_pem)
        try:
            context.verify(signature)
        except xmlsec.Error as error:
            last_error = error
            if document is not None:
                remember(document, node_name, node_id, cert_pem, False)
            continue
        if document is not None:
            remember(document, node_name, node_id, cert_pem, True)
        return cert_pem
    raise last_error or Refused("no certificate configured")


# HTTP-Redirect binding (SAML bindings §3.4.4.1): SigAlg URI -> the libxmlsec1 transform that checks it.
_XMLDSIG_MORE = "http://www.w3.org/2001/04/xmldsig-more#"
REDIRECT_SIGNATURE_TRANSFORMS = {
    "http://www.w3.org/2000/09/xmldsig#rsa-sha1": xmlsec.constants.TransformRsaSha1,
    _XMLDSIG_MORE + "rsa-sha256": xmlsec.constants.TransformRsaSha256,
    _XMLDSIG_MORE + "rsa-sha384": xmlsec.constants.TransformRsaSha384,
    _XMLDSIG_MORE + "rsa-sha512": xmlsec.constants.TransformRsaSha512,
}


def verify_redirect(octets, sig_alg, signature_value, cert_pems):
    """The PEM of the configured certificate whose key made ``signature_value`` over ``octets`` (the
    query parts as received, ``SAMLRequest=..&RelayState=..&SigAlg=..``); raises Refused or
    xmlsec.Error. The same library and the same configured-certificate rule as ``verify_element``:
    only a configured certificate is a key, whatever the message says. Which algorithms are
    acceptable is the algorithm policy's call (sso.saml.algorithms), applied by the caller."""
    transform = REDIRECT_SIGNATURE_TRANSFORMS.get(sig_alg)
    if transform is None:
        raise Refused(f"SigAlg {sig_alg!r} is not a signature algorithm this verifier checks")
    last_error = None
    for cert_pem in cert_pems:
        context = xmlsec.SignatureContext()
        context.key = _certificate_key(cert_pem)
        try:
            context.verify_binary(octets, transform, signature_value)
        except xmlsec.Error as error:
            last_error = error
            continue
        return cert_pem
    raise last_error or Refused("no certificate configured")


def _located(root, node_name, node_id):
    """The Response (the root) or its one Assertion, when it is ``node_name`` and carries ``node_id``."""
    element = root if node_name == RESPONSE_NODE else structure.the_assertion(root)
    if node_name not in (RESPONSE_NODE, ASSERTION_NODE) or element is None or element.get("ID") != node_id:
        raise Refused(f"no {node_name} with ID {node_id!r} where SAML puts one")
    return element


def verify(signed_text, cert_pem, node_name, node_id):
    """The full check: True when ``signed_text`` has the one shape of sso.saml.structure and its
    ``node_name`` element (the root Response or its one Assertion) with ``ID`` ``node_id`` carries a
    valid enveloped signature by ``cert_pem``; False (and a log line) otherwise.

    The EncryptedAssertion may hold the plaintext Assertion here: pysaml2 asks about the document
    that ``decrypt`` below produced. A document as received never reaches pysaml2 in that shape:
    sso.saml.verified refuses it first.
    """
    document = _as_bytes(signed_text)
    try:
        root = structure.parse(document)
        structure.check(root, decrypted=True)
        element = _located(root, node_name, node_id)
        verify_element(element, [cert_pem], document)
    except (Refused, structure.StructureRefused) as refused:
        logger.info("SAML signature refused before verification: %s", refused)
        return False
    except xmlsec.Error as error:
        logger.info("SAML signature does not verify: %s", error)
        return False
    return True


def decrypt_element(data, key_pem):
    """Replace the EncryptedData element ``data`` by its plaintext, in its tree; raises Refused or
    xmlsec.Error. Only the SP's key is used; everything it refers to must be in the document."""
    root = data.getroottree().getroot()
    if next(data.iter(CIPHER_REFERENCE), None) is not None:
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


def decrypt(encrypted_text, key_pem):
    """The document with its first EncryptedData replaced by the plaintext, as ``xmlsec1 --decrypt
    --privkey-pem <key> --id-attr:Id EncryptedKey`` writes it; raises Refused or xmlsec.Error."""
    try:
        root = structure.parse(encrypted_text)
    except structure.StructureRefused as refused:
        raise Refused(str(refused)) from None
    found = list(root.iter(ENCRYPTED_DATA))
    if len(found) != 1:
        # sso.saml.structure admits one EncryptedData; pysaml2 calls this until none is left, so
        # this bounds its loop to one decryption whatever the document holds (I6).
        raise Refused(f"{len(found)} EncryptedData, not one")
    decrypt_element(found[0], key_pem)
    return etree.tostring(root, encoding="unicode")


class InProcessVerifier(CryptoBackendXmlSec1):
    """pysaml2's xmlsec1 backend with ``validate_signature`` and ``decrypt`` done in this process."""

    def decrypt(self, enctext, key_file):
        with open(key_file, "rb") as handle:
            key_pem = handle.read()
        # pysaml2 verifies a response twice when its Assertion is unsigned (entity.py retries
        # without require_signature), decrypting the same text each time. One client serves one
        # request (sso.saml.config.client), so this memo lives and dies with that request.
        memo = self.__dict__.setdefault("_decrypted", {})
        memo_key = (hashlib.sha256(_as_bytes(enctext)).digest(), hashlib.sha256(key_pem).digest())
        if memo_key in memo:
            return memo[memo_key]
        try:
            memo[memo_key] = decrypt(enctext, key_pem)
        except (Refused, xmlsec.Error) as error:
            logger.info("SAML EncryptedData not decrypted: %s", error)
            raise DecryptError(str(error)) from None
        return memo[memo_key]

    def validate_signature(self, signedtext, cert_file, cert_type, node_name, node_id):
        if cert_type != "pem" or not node_id:
            return False
        with open(cert_file, encoding="ascii") as handle:
            cert_pem = handle.read()
        remembered = _MEMO.get(_memo_key(_as_bytes(signedtext), node_name, node_id, cert_pem))
        if remembered is not None:
            return remembered
        return verify(signedtext, cert_pem, node_name, node_id)
