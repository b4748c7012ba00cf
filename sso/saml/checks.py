"""System check: the xmlsec1 binary (Debian package ``xmlsec1``) must be installed.

Signatures are verified and assertions decrypted in-process (sso/saml/signature.py), but pysaml2's
crypto backend refuses to build a SAML client when the binary it was built around is missing.
"""

import shutil

from django.core.checks import Error, register


@register()
def check_xmlsec1(app_configs, **kwargs):
    if shutil.which("xmlsec1"):
        return []
    return [Error(
        "The xmlsec1 binary is not installed: SAML responses cannot be processed.",
        hint="Install it (Debian/Ubuntu: apt-get install xmlsec1; macOS: brew install libxmlsec1) "
             "or remove the SAML providers.",
        id="sso.E010",
    )]
