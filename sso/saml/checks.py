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
        # pysaml2 needs the binary to build any SAML client, so this fires with no SAML provider yet:
        # the fix is to install it, never to remove providers.
        hint="Install the xmlsec1 program: Debian/Ubuntu: apt-get install xmlsec1; Fedora/RHEL: dnf install "
             "xmlsec1 xmlsec1-openssl; Alpine: apk add xmlsec; macOS: brew install libxmlsec1. It must be on "
             "the PATH of the server process.",
        id="sso.E010",
    )]
