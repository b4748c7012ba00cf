"""SAML schema validation by libxml2 (lxml) for pysaml2's signature checks.

pysaml2 validates every signed element against the SAML protocol schema before trusting its
signature (its defence against signature wrapping), with the pure-Python ``xmlschema`` package:
about 4 ms of a 25 ms ACS request. libxml2 validates the same document against the same XSD files
(those pysaml2 ships) in about 0.25 ms. ``install()`` (called by sso.saml.patches) swaps the function pysaml2's ``sigver``
module calls; the exception it raises is pysaml2's own ``XMLSchemaError``, so pysaml2's handling
(a SignatureError, the response refused) is unchanged. tests/sso/saml/test_schema.py checks that
both validators agree on valid and broken documents.

The schema files are read from pysaml2's package only: every import, whatever URL it names, is
resolved to the file of that name there, and nothing is fetched. A validator per thread, because a
validator's error log is per object; but they are loaded one at a time (``_LOADING``): libxml2 cannot
read XSD files in two threads at once, and a threaded server (granian runs 4 threads per worker)
starting under load had one thread refuse a genuine signed response ("Document is not valid XML
Schema") while it loaded its validator.
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


_LOADING = threading.Lock()


def _load():
    # The XSD files are trusted local files; xmldsig-core-schema.xsd declares internal entities.
    parser = etree.XMLParser(no_network=True, load_dtd=False, resolve_entities=True)
    parser.resolvers.add(_PackagedSchemas())
    with _LOADING:
        return etree.XMLSchema(etree.parse(os.path.join(SCHEMA_DIR, ROOT_SCHEMA), parser))


_local = threading.local()


def _schema():
    schema = getattr(_local, "schema", None)
    if schema is None:
        schema = _local.schema = _load()
    return schema


def validate(doc):
    """Raise pysaml2's XMLSchemaError unless ``doc`` (str or bytes) is valid SAML 2.0 protocol XML."""
    data = doc.encode("utf-8") if isinstance(doc, str) else doc
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
    saml2.sigver.validate_doc_with_schema = validate

