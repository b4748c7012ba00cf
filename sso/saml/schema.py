"""SAML schema validation by libxml2 (lxml) for pysaml2's signature checks.

pysaml2 validates every signed element against the SAML protocol schema before trusting its
signature (its defence against signature wrapping), with the pure-Python ``xmlschema`` package:
about 4 ms of a 25 ms ACS request. libxml2 validates the same document against the same XSD files
(those pysaml2 ships) in about 0.25 ms. ``install()`` (called by sso.saml.patches) swaps the function pysaml2's ``sigver``
module calls; the exception it raises is pysaml2's own ``XMLSchemaError``, so pysaml2's handling
(a SignatureError, the response refused) is unchanged. tests/sso/saml/test_schema.py checks that
both validators agree on valid and broken documents.

The schema files are read from pysaml2's package only: every import, whatever URL it names, is
resolved to the file of that name there, and nothing is fetched.

One validator per process, loaded by ``install()`` at start-up, before a threaded server (granian runs
4 threads per worker) starts its threads; parsing and validating hold ``_LIBXML2``. libxml2 cannot
read XSD files while other threads parse: with a validator loaded lazily per thread, a worker starting
under load refused a genuine signed response ("QName ... EncryptedData does not resolve", "Document is
not valid XML Schema"), and a lock around the loads alone did not stop it. The lock also keeps the
validator's error log (one per object) to the document that filled it. Holding it costs little: a
document is parsed and validated in about 0.25 ms.
"""

import os
import threading

import saml2.data.schemas
import saml2.sigver
from lxml import etree
from saml2.xml.schema import XMLSchemaError

SCHEMA_DIR = os.path.dirname(saml2.data.schemas.__file__)
ROOT_SCHEMA = "saml-schema-protocol-2.0.xsd"

# Documents: no DTD, no entities, nothing fetched (as sso.saml.xml and sso.saml.signature).
_DOCUMENT_PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False)


class _PackagedSchemas(etree.Resolver):
    """Every schema import resolves to the file of the same name in pysaml2's schema directory."""

    def resolve(self, url, pubid, context):
        path = os.path.join(SCHEMA_DIR, os.path.basename(url or ""))
        if os.path.isfile(path):
            return self.resolve_filename(path, context)
        return None


_LIBXML2 = threading.Lock()
_validator = None


def _load():
    # The XSD files are trusted local files; xmldsig-core-schema.xsd declares internal entities.
    parser = etree.XMLParser(no_network=True, load_dtd=False, resolve_entities=True)
    parser.resolvers.add(_PackagedSchemas())
    return etree.XMLSchema(etree.parse(os.path.join(SCHEMA_DIR, ROOT_SCHEMA), parser))


def _schema():
    """The process's validator; call with ``_LIBXML2`` held."""
    global _validator
    if _validator is None:
        _validator = _load()
    return _validator


def validate(doc):
    """Raise pysaml2's XMLSchemaError unless ``doc`` (str or bytes) is valid SAML 2.0 protocol XML."""
    data = doc.encode("utf-8") if isinstance(doc, str) else doc
    with _LIBXML2:
        try:
            root = etree.fromstring(data, _DOCUMENT_PARSER)
            docinfo = root.getroottree().docinfo
            if docinfo.doctype or docinfo.internalDTD is not None:
                raise XMLSchemaError({"doc": doc, "error": "a DOCTYPE is not allowed"})
            schema = _schema()
            if schema.validate(root):
                return
            error = str(schema.error_log.last_error)
        except (etree.Error, ValueError) as exc:
            error = str(exc)
    raise XMLSchemaError({"doc": doc, "error": error})


def install():
    with _LIBXML2:
        _schema()  # at start-up, before any server thread parses (the module docstring says why)
    saml2.sigver.validate_doc_with_schema = validate

