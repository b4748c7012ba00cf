"""The shape a SAML Response must have before any of it is trusted (security.md I2; issue 12 F1).

Signature wrapping (Somorovsky et al. 2012, XSW1-XSW8) works by giving the verifier and the reader
two different copies of the data: a genuine signed element hidden somewhere (Extensions, Advice,
ds:Object, a sibling) and a forged one where the reader looks. Ignoring the extra copies is not
enough, because every parser has its own idea of which copy is "the" one. So a document that holds
any other copy is refused outright, and what is left has exactly one place for each thing:

- the root is the one ``samlp:Response``; no other element anywhere is named Response;
- at most one ``saml:Assertion``, a direct child of the root, or (after decryption) the child of the
  one ``saml:EncryptedAssertion``, itself a direct child of the root; nothing else named Assertion
  or EncryptedAssertion, in any namespace (a foreign ``x:Assertion`` or a default-namespace trick);
- a ``ds:Signature`` only as a direct child of the Response or of that Assertion, one each at most,
  with one ``ds:Reference`` in its SignedInfo and no other Reference anywhere;
- no ``ds:Object`` or ``ds:Manifest`` (SAML signatures never need one; XSW hides copies in them);
- no two elements share an ``ID``, ``Id`` or ``xml:id`` value (a Reference must find one element);
- at most one Issuer per Response or Assertion;
- XML encryption (security.md I6) only where SAML puts it: one ``xenc:EncryptedData``, the child of
  the one EncryptedAssertion, and a few ``xenc:EncryptedKey`` beside it or in its ``ds:KeyInfo``;
  no other element of the xenc namespaces anywhere. Every EncryptedData elsewhere (Extensions, say)
  would cost pysaml2 a decryption and a parse of the whole document each (it decrypts "the first
  EncryptedData" until none is left), so a 45 KB response cost seconds; refused here, it costs one
  parse;
- no comment and no processing instruction: c14n without comments signs ``alice@corp.test`` for
  ``alice@corp.test<!---->.evil.test``, and a reader that stops at the comment sees another name.
  No IdP we know of puts either inside a Response, so refusing costs nothing.

One walk over the tree, no second parse. ``parse`` is the only XML parser of the ACS path.
"""

from lxml import etree

from sso.saml.xml import DS, SAML, SAMLP, XENC

XENC11 = "http://www.w3.org/2009/xmlenc11#"

XML_NS = "http://www.w3.org/XML/1998/namespace"

RESPONSE = f"{{{SAMLP}}}Response"
ASSERTION = f"{{{SAML}}}Assertion"
ENCRYPTED_ASSERTION = f"{{{SAML}}}EncryptedAssertion"
ISSUER = f"{{{SAML}}}Issuer"
SIGNATURE = f"{{{DS}}}Signature"
SIGNED_INFO = f"{{{DS}}}SignedInfo"
REFERENCE = f"{{{DS}}}Reference"
KEY_INFO = f"{{{DS}}}KeyInfo"
ENCRYPTED_DATA = f"{{{XENC}}}EncryptedData"
ENCRYPTED_KEY = f"{{{XENC}}}EncryptedKey"
XENC_NAMESPACES = (f"{{{XENC}}}", f"{{{XENC11}}}")
# Each EncryptedKey is one RSA decryption attempt: one per recipient key is plenty.
MAX_ENCRYPTED_KEYS = 4
ID_ATTRIBUTES = ("ID", "Id", f"{{{XML_NS}}}id")
# Local names that may only appear where the rules above put them, whatever their namespace.
GUARDED = {"Response", "Assertion", "EncryptedAssertion", "Signature", "Object", "Manifest", "Reference",
           "EncryptedData", "EncryptedKey"}

# No DTD is loaded, no entity expanded, nothing fetched; comments and PIs are kept so they can be refused.
PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False,
                         remove_blank_text=False, remove_comments=False, remove_pis=False)


class StructureRefused(Exception):
    """The document is not one shape the ACS reads; the message says why (logged, never shown)."""


def parse(data):
    """The root element of ``data`` (bytes or str); raises StructureRefused for non-XML or a DOCTYPE."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        root = etree.fromstring(data, PARSER)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise StructureRefused(f"unparseable: {exc}") from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:
        raise StructureRefused("DOCTYPE")
    return root


def local_name(tag):
    return tag.rpartition("}")[2]


def the_assertion(root, decrypted=True):
    """The one Assertion the rules allow (child of the root, or of its EncryptedAssertion once that
    was decrypted by us), or None."""
    assertion = root.find(ASSERTION)
    if assertion is None and decrypted:
        wrapper = root.find(ENCRYPTED_ASSERTION)
        assertion = wrapper.find(ASSERTION) if wrapper is not None else None
    return assertion


def check(root, decrypted=False):
    """Raise StructureRefused unless ``root`` has the one shape described in the module docstring.

    ``decrypted``: the EncryptedAssertion's EncryptedData was replaced by its plaintext by us, so the
    Assertion may be its child; in a document as received an EncryptedAssertion holds no Assertion."""
    if root.tag != RESPONSE:
        raise StructureRefused(f"root is {root.tag!r}, not samlp:Response")
    for sibling in (*root.itersiblings(preceding=True), *root.itersiblings()):
        raise StructureRefused(f"{type(sibling).__name__} outside the Response")
    assertion = the_assertion(root, decrypted)
    signed_parents = (root, assertion)
    encryption, encrypted_subtree = _encryption_elements(root)
    seen_ids = set()
    for element in root.iter():
        tag = element.tag
        if not isinstance(tag, str):
            raise StructureRefused("comment or processing instruction inside the Response")
        # The substring test first only because it is the cheapest on every element of every response.
        if "xmlenc" in tag and tag.startswith(XENC_NAMESPACES) and element not in encrypted_subtree:
            raise StructureRefused(f"{tag} outside the EncryptedAssertion")
        for name in ID_ATTRIBUTES:
            value = element.get(name)
            if value is not None:
                if value in seen_ids:
                    raise StructureRefused(f"duplicate ID {value!r}")
                seen_ids.add(value)
        if local_name(tag) in GUARDED:
            _check_guarded(root, assertion, signed_parents, element, encryption)
    _check_issuers(root)
    if assertion is not None:
        _check_issuers(assertion)


def _encryption_elements(root):
    """The EncryptedData and EncryptedKeys allowed (see the module docstring), and every element
    inside them (where other xenc elements may be). Anything more is refused, before decryption."""
    wrappers = root.findall(ENCRYPTED_ASSERTION)
    if len(wrappers) != 1:
        return set(), set()
    data = wrappers[0].findall(ENCRYPTED_DATA)
    if len(data) > 1:
        raise StructureRefused(f"{len(data)} EncryptedData in the EncryptedAssertion")
    keys = wrappers[0].findall(ENCRYPTED_KEY) + (data[0].findall(f"{KEY_INFO}/{ENCRYPTED_KEY}") if data else [])
    if len(keys) > MAX_ENCRYPTED_KEYS:
        raise StructureRefused(f"{len(keys)} EncryptedKeys in the EncryptedAssertion")
    allowed = set(data + keys)
    return allowed, {inner for element in allowed for inner in element.iter()}


def _check_guarded(root, assertion, signed_parents, element, encryption):
    tag, parent = element.tag, element.getparent()
    if tag in (ENCRYPTED_DATA, ENCRYPTED_KEY) and element in encryption:
        return
    if tag == RESPONSE and element is root:
        return
    if tag == ASSERTION and element is assertion:
        return
    if tag == ENCRYPTED_ASSERTION and parent is root and root.find(ASSERTION) is None \
            and len(root.findall(ENCRYPTED_ASSERTION)) == 1:
        return
    if tag == SIGNATURE and parent is not None and parent in signed_parents:
        if len(parent.findall(SIGNATURE)) != 1:
            raise StructureRefused(f"{len(parent.findall(SIGNATURE))} signatures on one element")
        return
    if tag == REFERENCE and parent is not None and parent.tag == SIGNED_INFO:
        signature = parent.getparent()
        if signature is not None and signature.tag == SIGNATURE and signature.getparent() in signed_parents \
                and parent.getparent() is signature and len(parent.findall(REFERENCE)) == 1:
            return
    raise StructureRefused(f"{tag} not where SAML allows it")


def _check_issuers(element):
    if len(element.findall(ISSUER)) > 1:
        raise StructureRefused(f"several Issuers on {local_name(element.tag)}")


# --- Single Logout messages ------------------------------------------------------------------------
LOGOUT_REQUEST = f"{{{SAMLP}}}LogoutRequest"
LOGOUT_RESPONSE = f"{{{SAMLP}}}LogoutResponse"
NAME_ID = f"{{{SAML}}}NameID"
SESSION_INDEX = f"{{{SAMLP}}}SessionIndex"
# What a logout message never holds: assertions, encryption (we do not take an EncryptedID), a second
# message, signature containers (XSW hides copies there).
_LOGOUT_FORBIDDEN = GUARDED | {"LogoutRequest", "LogoutResponse", "EncryptedID"}


def check_logout(root, expected):
    """Raise StructureRefused unless ``root`` is one ``expected`` (LOGOUT_REQUEST or LOGOUT_RESPONSE)
    of the one shape the SLO endpoint reads (I2, as ``check`` for a Response): nothing outside it, no
    comment or processing instruction, no duplicate ID, at most one ``ds:Signature`` and only as the
    root's direct child with one Reference, nothing named like an assertion, a message, encrypted
    data or a signature container anywhere else, at most one Issuer, the root's child, and in a
    LogoutRequest exactly one NameID and its SessionIndexes, children of the root (nowhere else)."""
    if root.tag != expected:
        raise StructureRefused(f"root is {root.tag!r}, not {expected!r}")
    for sibling in (*root.itersiblings(preceding=True), *root.itersiblings()):
        raise StructureRefused(f"{type(sibling).__name__} outside the message")
    signatures = root.findall(SIGNATURE)
    if len(signatures) > 1:
        raise StructureRefused(f"{len(signatures)} signatures on the message")
    allowed = {root}
    if signatures:
        allowed.add(signatures[0])
        references = signatures[0].findall(f"{SIGNED_INFO}/{REFERENCE}")
        allowed.update(references if len(references) == 1 else ())
    seen_ids = set()
    for element in root.iter():
        if not isinstance(element.tag, str):
            raise StructureRefused("comment or processing instruction inside the message")
        if element.tag.startswith(XENC_NAMESPACES):
            raise StructureRefused(f"{element.tag} in a logout message")
        for name in ID_ATTRIBUTES:
            value = element.get(name)
            if value is not None:
                if value in seen_ids:
                    raise StructureRefused(f"duplicate ID {value!r}")
                seen_ids.add(value)
        if local_name(element.tag) in _LOGOUT_FORBIDDEN and element not in allowed:
            raise StructureRefused(f"{element.tag} not where a logout message allows it")
        if element.tag == ISSUER and element.getparent() is not root:
            raise StructureRefused("an Issuer outside the message's own")
        if element.tag in (NAME_ID, SESSION_INDEX) and (expected != LOGOUT_REQUEST or element.getparent() is not root):
            raise StructureRefused(f"{element.tag} outside the LogoutRequest's own")
    _check_issuers(root)
    if expected == LOGOUT_REQUEST and len(root.findall(NAME_ID)) != 1:
        raise StructureRefused(f"{len(root.findall(NAME_ID))} NameIDs in the LogoutRequest, not one")


# --- values both the ACS record and the SLO lookup read (one reader each, I2) ------------------------
# What the ACS stores for Single Logout and what a LogoutRequest is compared with must be read the same
# way, or the stored value is not the value compared (attack pass 14: the ACS kept " s " as asserted,
# the SLO service stripped the request's to "s", and the IdP's logout ended nothing).
AUTHN_STATEMENT = f"{{{SAML}}}AuthnStatement"


def name_id_value(element):
    """A NameID's value: its text, surrounding whitespace trimmed (pretty-printed IdP XML puts some
    there; the account key has always been the trimmed value, and pysaml2 reads it so too)."""
    return "".join(element.itertext()).strip() if element is not None else None


def session_index_value(value):
    """A SessionIndex as SAML compares it: an xs:string, as is (no whitespace normalisation), so the
    value the IdP asserted is the value its LogoutRequest repeats. None for a missing or empty one."""
    return value or None


def asserted_session_index(assertion):
    """The SessionIndex of an Assertion's AuthnStatement (what the ACS records), or None."""
    statement = assertion.find(AUTHN_STATEMENT)
    return session_index_value(statement.get("SessionIndex")) if statement is not None else None


def requested_session_indexes(root):
    """The SessionIndexes a LogoutRequest names (what the SLO lookup compares with the record)."""
    return [session_index_value("".join(element.itertext())) for element in root.findall(SESSION_INDEX)]
