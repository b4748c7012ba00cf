"""Every change this project makes to pysaml2, installed in one place: ``SsoConfig.ready()``.

Each patch replaces one pysaml2 function with a faster one of the same contract; none changes what
is accepted (tests/sso/saml/test_schema.py compares the validators). Installing is idempotent, and
happens once per process before any request, instead of as a side effect of importing a module.

- ``schema.install``: pysaml2 validates every signed element against the SAML schema with the
  pure-Python ``xmlschema`` package (~4 ms per ACS request); libxml2 validates against the same XSD
  files in ~0.25 ms and raises pysaml2's own ``XMLSchemaError``.
- ``xmlsec_version.install``: pysaml2 starts ``xmlsec1 --version`` each time it reads the backend's
  version, twice per signature (~10 ms per ACS request); the answer is cached per binary path.

The third change is not a patch but a configured backend: sso.saml.config._saml_client gives each
client ``sso.saml.signature.InProcessVerifier`` (signatures and decryption in this process).
"""

from sso.saml import schema, xmlsec_version


def install():
    schema.install()
    xmlsec_version.install()
