"""SP metadata of a SAML provider (sso.md §5 ``GET /sso/saml2/sp/metadata``), and what metadata may hold.

``spMetadata.metadata`` given at registration is served re-serialised (:func:`reserialise`), never as
the stored text (I3): only SAML metadata, XML Signature and XML Encryption elements, their attributes
without a foreign namespace, and text. A stored "metadata" that is XHTML with a ``<script>``, an SVG,
a stylesheet processing instruction or a comment therefore cannot reach a browser from the auth origin;
a document that is not an ``md:EntityDescriptor`` is replaced by the generated one. Without given
metadata: one unsigned EntityDescriptor with a single SPSSODescriptor, written here rather than by
pysaml2 so its shape is exactly the documented one (better-auth's, with our ACS path and optional
KeyDescriptors).

:func:`foreign_content` is the registration-time rule for IdP and SP metadata alike: an element or
attribute outside the SAML family of namespaces, or a processing instruction, is refused.
"""

import re
from xml.sax.saxutils import escape, quoteattr

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT

from authservice import origins
from authservice.errors import APIError
from sso import app_settings, default_providers
from sso.errors import NO_PROVIDER_FOR_ID_MESSAGE, codes
from sso.models import SsoProvider
from sso.saml import config, slo_config, xml
from sso.saml_config import ENDPOINT_URL_KEYS, _pem_blocks


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


XML_NS = "http://www.w3.org/XML/1998/namespace"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
DS11 = "http://www.w3.org/2009/xmldsig11#"
XENC11 = "http://www.w3.org/2009/xmlenc11#"
# What a served SP document keeps, with the prefix it is written with.
SERVED_PREFIXES = {xml.MD: "md", xml.DS: "ds", xml.XENC: "xenc"}
# What registration accepts in IdP or SP metadata: the SAML 2.0 metadata schema and the namespaces its
# documents legitimately carry (signatures, keys, attributes in IDPSSODescriptor, the OASIS metadata
# extensions in md:Extensions). Anything else, XHTML, SVG, MathML, XSLT or XInclude above all, is
# "foreign": a browser may run it, and SAML never needs it.
ALLOWED_NAMESPACES = frozenset({
    xml.MD, xml.DS, xml.XENC, DS11, XENC11, xml.SAML,
    "urn:oasis:names:tc:SAML:metadata:ui",
    "urn:oasis:names:tc:SAML:metadata:rpi",
    "urn:oasis:names:tc:SAML:metadata:attribute",
    "urn:oasis:names:tc:SAML:metadata:algsupport",
    "urn:oasis:names:tc:SAML:profiles:SSO:idp-discovery-protocol",
    "urn:oasis:names:tc:SAML:profiles:SSO:request-init",
    "urn:mace:shibboleth:metadata:1.0",
    # ADFS and Entra ID publish a WS-Federation RoleDescriptor in their SAML metadata; inert XML.
    "http://docs.oasis-open.org/wsfed/federation/200706",
    "http://docs.oasis-open.org/wsfed/authorization/200706",
    "http://www.w3.org/2005/08/addressing",
    "http://schemas.xmlsoap.org/ws/2004/09/mex",
})
# Namespaced attributes any SAML document may carry (xml:lang on names, xsi:type on RoleDescriptor).
ALLOWED_ATTRIBUTE_NAMESPACES = ALLOWED_NAMESPACES | {XML_NS, XSI}
# Any processing instruction but the XML declaration (``<?xml-stylesheet ...?>`` runs XSLT in a browser).
_PROCESSING_INSTRUCTION = re.compile(r"<\?(?!xml[\s?])", re.IGNORECASE)


def _namespace(name):
    return name[1:].split("}", 1)[0] if name.startswith("{") else ""


def foreign_content(text, root):
    """A description of the first foreign element, attribute or processing instruction, else None."""
    if _PROCESSING_INSTRUCTION.search(text if isinstance(text, str) else text.decode("utf-8", "replace")):
        return "a processing instruction"
    for element in root.iter():
        if not isinstance(element.tag, str) or _namespace(element.tag) not in ALLOWED_NAMESPACES:
            return f"the element {element.tag}"
        for name in element.attrib:
            namespace = _namespace(name)
            if namespace and namespace not in ALLOWED_ATTRIBUTE_NAMESPACES:
                return f"the attribute {name}"
    return None


# Every URL-valued node SAML metadata may carry (I4: whatever we store or serve is http(s)); checked by
# sso.saml.validation at register, update and refresh, and dropped from a served document (older rows).
MDUI = "urn:oasis:names:tc:SAML:metadata:ui"
MDRPI = "urn:oasis:names:tc:SAML:metadata:rpi"
URL_ATTRIBUTES = ENDPOINT_URL_KEYS  # on any element (endpoints, DiscoveryResponse ...); as the JSON services
URL_ELEMENTS = frozenset({
    xml.q(xml.MD, "OrganizationURL"), xml.q(xml.MD, "AdditionalMetadataLocation"),
    xml.q(MDUI, "InformationURL"), xml.q(MDUI, "PrivacyStatementURL"), xml.q(MDUI, "Logo"),
    xml.q(MDRPI, "RegistrationPolicy"), xml.q(MDRPI, "UsagePolicy"),
})
# md:EmailAddress is a mailto: URL or a plain address; any other scheme (javascript:) is refused.
EMAIL_ELEMENTS = frozenset({xml.q(xml.MD, "EmailAddress")})


def _is_contact_address(value):
    return value.lower().startswith("mailto:") or (":" not in value and not any(c.isspace() for c in value))


def bad_url(element):
    """``"<name> <attribute>"`` (or ``"<name>"``) of the first URL node of ``element`` that is not an
    allowed URL, else None."""
    name = element.tag.rpartition("}")[2] if isinstance(element.tag, str) else ""
    for attribute in URL_ATTRIBUTES:
        value = element.get(attribute)
        if value is not None and not origins.is_http_url(value):
            return f"{name} {attribute}"
    text = (element.text or "").strip()
    if element.tag in URL_ELEMENTS and text and not origins.is_http_url(text):
        return name
    if element.tag in EMAIL_ELEMENTS and text and not _is_contact_address(text):
        return name
    return None


def _start_tag(element, declarations=()):
    namespace, _, local = element.tag[1:].partition("}")
    parts = [f"<{SERVED_PREFIXES[namespace]}:{local}"]
    parts += [f" xmlns:{prefix}={quoteattr(uri)}" for uri, prefix in declarations]  # the root only
    for key, value in element.attrib.items():
        key_namespace = _namespace(key)
        if key_namespace == XML_NS:
            parts.append(f" xml:{key.split('}', 1)[1]}={quoteattr(value)}")
        elif not key_namespace:
            parts.append(f" {key}={quoteattr(value)}")
    return "".join(parts), f"</{SERVED_PREFIXES[namespace]}:{local}>"


def _serialise(root, declarations):
    """Kept elements, attributes and escaped text; iterative, so no nesting depth can overflow."""
    out = []
    stack = [(root, declarations, None)]
    while stack:
        element, declare, closing = stack.pop()
        if closing is not None:  # the end of ``element``, then its tail inside the parent
            out.append(closing + escape(element.tail or "") if element is not root else closing)
            continue
        opening, end_tag = _start_tag(element, declare)
        children = [child for child in element
                    if _namespace(child.tag) in SERVED_PREFIXES and bad_url(child) is None]
        if not children and not element.text:
            out.append(opening + "/>" + ("" if element is root else escape(element.tail or "")))
            continue
        out.append(opening + ">" + escape(element.text or ""))
        stack.append((element, (), end_tag))
        stack.extend((child, (), None) for child in reversed(children))
    return "".join(out)


def reserialise(text):
    """``text`` rebuilt from its SAML metadata, xmldsig and xmlenc elements; None when it is no SP
    EntityDescriptor. Only elements, plain (or ``xml:``) attributes and escaped text are written, so
    nothing in the output is markup the input's author chose."""
    try:
        root = xml.parse(text)
    except xml.XmlRefused:
        return None
    if root.tag != xml.q(xml.MD, "EntityDescriptor"):
        return None
    used = {_namespace(element.tag) for element in root.iter() if isinstance(element.tag, str)}
    declared = [(uri, prefix) for uri, prefix in SERVED_PREFIXES.items() if uri in used]
    return _serialise(root, declared)


def sp_metadata(ctx, settings):
    """The SP metadata XML of one provider's Settings."""
    given = settings.sp.get("metadata")
    if isinstance(given, str) and given.strip():
        served = reserialise(given)
        if served is not None:
            return served
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
        f"{_single_logout_services(ctx, settings)}"
        f"<md:NameIDFormat>{_escape(settings.name_id_format)}</md:NameIDFormat>"
        f'<md:AssertionConsumerService index="0" Binding="{BINDING_HTTP_POST}" '
        f"Location={quoteattr(settings.acs_url(ctx))}/>"
        "</md:SPSSODescriptor></md:EntityDescriptor>")


def _single_logout_services(ctx, settings):
    """With Single Logout on, our SLO service in both bindings (docs/saml-slo.md), else nothing."""
    if not app_settings.saml.enable_single_logout:
        return ""
    location = quoteattr(slo_config.slo_url(ctx, settings.provider))
    return "".join(f'<md:SingleLogoutService Binding="{binding}" Location={location}/>'
                   for binding in (BINDING_HTTP_REDIRECT, BINDING_HTTP_POST))


def _escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def for_provider(ctx, provider_id):
    """The XML for ``provider_id``; 404 PROVIDER_NOT_FOUND, or 400 SAML_CONFIG_INVALID for OIDC."""
    provider = default_providers.find(provider_id)
    if provider is None:
        raise APIError(404, codes.PROVIDER_NOT_FOUND, NO_PROVIDER_FOR_ID_MESSAGE)
    if not provider.saml_config:
        raise APIError(400, codes.SAML_CONFIG_INVALID)
    return sp_metadata(ctx, config.Settings.of(provider))
