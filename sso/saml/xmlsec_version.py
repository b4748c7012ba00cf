"""Ask the xmlsec1 binary for its version once per process, not twice per SAML response.

pysaml2's ``CryptoBackendXmlSec1.version`` starts ``xmlsec1 --version`` every time it is read, and a
signature check reads it twice: about 10 ms of a ~50 ms ACS request (bench/README.md). The answer
depends only on the binary, so it is cached per binary path; nothing shared between processes.
``install()`` is called by sso.saml.patches.
"""

import functools
import subprocess

from saml2.sigver import CryptoBackendXmlSec1


@functools.lru_cache(maxsize=None)
def binary_version(path):
    """The version xmlsec1 at ``path`` reports (``"1.2.37"``), parsed as pysaml2 parses it."""
    try:
        output = subprocess.run([path, "--version"], capture_output=True, timeout=10, check=False).stdout
        return output.decode("ascii", "replace").split(" ")[1]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "0.0.0"


def install():
    CryptoBackendXmlSec1.version = property(lambda backend: binary_version(backend.xmlsec))

