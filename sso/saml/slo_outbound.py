"""Our logout messages to the IdP (docs/saml-slo.md): a LogoutRequest (SP-initiated) or a
LogoutResponse (answering the IdP's LogoutRequest), signed with the SP key and bound as the IdP's
SingleLogoutService asks.

- HTTP-Redirect: ``SAMLRequest|SAMLResponse = base64(deflate(xml))``, ``RelayState``, and with a key
  ``SigAlg`` + ``Signature`` over those query parts (SAML bindings §3.4.4.1);
- HTTP-POST: the XML carries an enveloped signature (exclusive c14n, the one Reference to its ID,
  the shape sso.saml.signature accepts) and goes in an auto-submitting form (:func:`post_form`).

Signing uses libxmlsec1 in this process (python-xmlsec), as verification does; the key is the SP
signing key of ``spMetadata.privateKey`` (or ``privateKey``), loaded once per process.
"""

import base64
import hashlib
import html
import uuid
import zlib
from dataclasses import dataclass
from urllib.parse import quote_plus, urlsplit, urlunsplit
from xml.sax.saxutils import escape, quoteattr

import xmlsec
from django.utils import timezone
from lxml import etree

from authservice.api import render
from sso.saml import config, structure, xml
from sso.saml.signature import REDIRECT_SIGNATURE_TRANSFORMS

DIGESTS = {
    "http://www.w3.org/2000/09/xmldsig#sha1": xmlsec.constants.TransformSha1,
    "http://www.w3.org/2001/04/xmlenc#sha256": xmlsec.constants.TransformSha256,
    "http://www.w3.org/2001/04/xmldsig-more#sha384": xmlsec.constants.TransformSha384,
    "http://www.w3.org/2001/04/xmlenc#sha512": xmlsec.constants.TransformSha512,
}
SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success"
# The POST page's one script; the page's CSP allows exactly this text (by its hash).
AUTO_SUBMIT = "document.forms[0].submit();"


@dataclass
class Outgoing:
    """A bound message: a URL to redirect to, or a form to post (``form`` is the HTML page)."""

    url: str | None = None
    form: str | None = None


def new_id():
    return "_" + uuid.uuid4().hex


def _instant():
    return timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ")


def logout_request(settings, request_id, destination, name_id, name_id_format=None, session_index=None):
    fmt = f" Format={quoteattr(name_id_format)}" if name_id_format else ""
    index = f"<samlp:SessionIndex>{escape(session_index)}</samlp:SessionIndex>" if session_index else ""
    return (
        f'<samlp:LogoutRequest xmlns:samlp="{xml.SAMLP}" xmlns:saml="{xml.SAML}" ID="{request_id}" Version="2.0"'
        f' IssueInstant="{_instant()}" Destination={quoteattr(destination)}>'
        f"<saml:Issuer>{escape(settings.sp_entity_id)}</saml:Issuer>"
        f"<saml:NameID{fmt}>{escape(name_id)}</saml:NameID>{index}</samlp:LogoutRequest>")


def logout_response(settings, response_id, destination, in_response_to, status=SUCCESS):
    return (
        f'<samlp:LogoutResponse xmlns:samlp="{xml.SAMLP}" xmlns:saml="{xml.SAML}" ID="{response_id}" Version="2.0"'
        f' IssueInstant="{_instant()}" Destination={quoteattr(destination)}'
        f" InResponseTo={quoteattr(in_response_to)}>"
        f"<saml:Issuer>{escape(settings.sp_entity_id)}</saml:Issuer>"
        f'<samlp:Status><samlp:StatusCode Value={quoteattr(status)}/></samlp:Status></samlp:LogoutResponse>')


def _key(settings):
    """The SP signing key as an xmlsec key, or None without one; raises config.ConfigError (the key
    cannot make signatureAlgorithm signatures: decided by config.signer_key, as for AuthnRequests)."""
    loaded = config.signer_key(settings)
    if loaded is None:
        return None
    try:
        return xmlsec.Key.from_memory(loaded[1], xmlsec.constants.KeyDataFormatPem)
    except xmlsec.Error as error:
        raise config.ConfigError(f"signing key: {error}") from None


def _signature_transform(settings):
    transform = REDIRECT_SIGNATURE_TRANSFORMS.get(settings.signature_algorithm)
    if transform is None:
        raise config.ConfigError(f"signatureAlgorithm {settings.signature_algorithm!r} cannot sign logout messages")
    return transform


def sign_xml(settings, text):
    """``text`` with an enveloped signature by the SP key right after its Issuer (schema order)."""
    key = _key(settings)
    root = structure.parse(text)
    template = xmlsec.template.create(root, xmlsec.constants.TransformExclC14N, _signature_transform(settings),
                                      ns="ds")
    root.insert(1, template)  # after saml:Issuer, the first child
    digest = DIGESTS.get(settings.digest_algorithm, xmlsec.constants.TransformSha256)
    reference = xmlsec.template.add_reference(template, digest, uri="#" + root.get("ID"))
    xmlsec.template.add_transform(reference, xmlsec.constants.TransformEnveloped)
    xmlsec.template.add_transform(reference, xmlsec.constants.TransformExclC14N)
    try:  # any libxmlsec1 refusal here is the stored config's fault: a 400, not a 500
        if settings.signing_cert:
            xmlsec.template.add_x509_data(xmlsec.template.ensure_key_info(template))
            key.load_cert_from_memory(settings.signing_cert, xmlsec.constants.KeyDataFormatCertPem)
        context = xmlsec.SignatureContext()
        context.register_id(root, "ID")
        context.key = key
        context.sign(template)
    except xmlsec.Error as error:
        raise config.ConfigError(f"signing failed: {error}") from None
    return etree.tostring(root, encoding="unicode")


def redirect(settings, destination, param, text, relay_state=None):
    """The IdP URL carrying ``text`` over HTTP-Redirect, signed when the SP has a key."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    encoded = base64.b64encode(deflater.compress(text.encode()) + deflater.flush()).decode()
    query = f"{param}={quote_plus(encoded)}"
    if relay_state:
        query += f"&RelayState={quote_plus(relay_state)}"
    key = _key(settings)
    if key is not None:
        query += f"&SigAlg={quote_plus(settings.signature_algorithm)}"
        context = xmlsec.SignatureContext()
        context.key = key
        try:
            value = context.sign_binary(query.encode("ascii"), _signature_transform(settings))
        except xmlsec.Error as error:
            raise config.ConfigError(f"signing failed: {error}") from None
        query += f"&Signature={quote_plus(base64.b64encode(value).decode())}"
    parts = urlsplit(destination)
    joined = f"{parts.query}&{query}" if parts.query else query
    return urlunsplit((parts.scheme, parts.netloc, parts.path, joined, ""))


def post_form(destination, param, text, relay_state=None):
    """The page that posts ``text`` (already signed) to ``destination``; every value escaped."""
    value = base64.b64encode(text.encode()).decode()
    relay = (f'<input type="hidden" name="RelayState" value="{html.escape(relay_state)}"/>'
             if relay_state else "")
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Signing out</title></head>'
        f'<body><form method="post" action="{html.escape(destination)}">'
        f'<input type="hidden" name="{param}" value="{value}"/>{relay}'
        '<noscript><button type="submit">Continue</button></noscript></form>'
        f"<script>{AUTO_SUBMIT}</script></body></html>")


def form_response(page):
    """The form page as an HTTP answer: our own page, whose one script is allowed by its hash."""
    digest = base64.b64encode(hashlib.sha256(AUTO_SUBMIT.encode()).digest()).decode()
    response = render.html(page)
    # render.html's sandbox would block both the script and the form: this page only needs its own
    # script (by hash) and to submit its form; nothing else loads.
    response["Content-Security-Policy"] = f"default-src 'none'; script-src 'sha256-{digest}'; base-uri 'none'"
    return response


def bind(settings, service, param, text, relay_state=None):
    """``text`` bound to ``service`` (slo_config.Service): a signed redirect URL or a signed POST form."""
    destination = service.target(param == "SAMLResponse")
    if service.binding == "redirect":
        return Outgoing(url=redirect(settings, destination, param, text, relay_state))
    if settings.signing_key:
        text = sign_xml(settings, text)
    return Outgoing(form=post_form(destination, param, text, relay_state))
