"""System check: pysaml2 verifies and decrypts through the xmlsec1 binary (Debian package ``xmlsec1``)."""

import shutil

from django.core.checks import Error, register


@register()
def check_xmlsec1(app_configs, **kwargs):
    if shutil.which("xmlsec1"):
        return []
    return [Error(
        "The xmlsec1 binary is not installed: SAML responses cannot be verified.",
        hint="Install it (Debian/Ubuntu: apt-get install xmlsec1; macOS: brew install libxmlsec1) "
             "or remove the SAML providers.",
        id="sso.E010",
    )]
