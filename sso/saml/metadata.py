"""SP metadata of a SAML provider (sso.md §5 ``GET /sso/saml2/sp/metadata``).

``spMetadata.metadata`` given at registration is returned verbatim; otherwise one unsigned
EntityDescriptor with a single SPSSODescriptor, written here rather than by pysaml2 so its shape is
exactly the documented one (better-auth's, with our ACS path and optional KeyDescriptors).
"""

from xml.sax.saxutils import quoteattr

from saml2 import BINDING_HTTP_POST

from authservice.errors import APIError
from sso.errors import NO_PROVIDER_FOR_ID_MESSAGE, codes
from sso.models import SsoProvider
from sso.saml import config, xml
from sso.saml_config import _pem_blocks


def _bool(value):
    return "true" if value else "false"


def _key_descriptor(use, pem):
    bodies = _pem_blocks(pem)
    if not bodies:
        return ""
    body = "".join(bodies[0].replace("-----BEGIN CERTIFICATE-----", "")
                   .replace("-----END CERTIFICATE-----", "").split())
    return (f'<md:KeyDescriptor use="{use}"><ds:KeyInfo xmlns:ds="{xml.DS}"><ds:X509Data>'
            f"<ds:X509Certificate>{body}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>")


def sp_metadata(ctx, settings):
    """The SP metadata XML of one provider's Settings."""
    given = settings.sp.get("metadata")
    if isinstance(given, str) and given.strip():
        return given
    keys = ""
    if settings.signing_cert:
        keys += _key_descriptor("signing", settings.signing_cert)
    if settings.encryption_cert:
        keys += _key_descriptor("encryption", settings.encryption_cert)
    return (
        f'<?xml version="1.0"?>\n'
        f'<md:EntityDescriptor xmlns:md="{xml.MD}" entityID={quoteattr(settings.sp_entity_id)}>'
        f'<md:SPSSODescriptor AuthnRequestsSigned="{_bool(settings.authn_requests_signed)}" '
        f'WantAssertionsSigned="{_bool(settings.want_assertions_signed)}" '
        f'protocolSupportEnumeration="{xml.SAMLP}">{keys}'
        f"<md:NameIDFormat>{_escape(settings.name_id_format)}</md:NameIDFormat>"
        f'<md:AssertionConsumerService index="0" Binding="{BINDING_HTTP_POST}" '
        f"Location={quoteattr(settings.acs_url(ctx))}/>"
        "</md:SPSSODescriptor></md:EntityDescriptor>")


def _escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def for_provider(ctx, provider_id):
    """The XML for ``provider_id``; 404 PROVIDER_NOT_FOUND, or 400 SAML_CONFIG_INVALID for OIDC."""
    provider = SsoProvider.objects.filter(provider_id=provider_id).first()
    if provider is None:
        raise APIError(404, codes.PROVIDER_NOT_FOUND, NO_PROVIDER_FOR_ID_MESSAGE)
    if not provider.saml_config:
        raise APIError(400, codes.SAML_CONFIG_INVALID)
    return sp_metadata(ctx, config.Settings.of(provider))
