"""A logout message from the IdP, checked before anything in it is used (docs/saml-slo.md).

``read(ctx, provider, kind, data, binding, query)`` returns the :class:`Inbound` message or
raises :class:`Refused` with the reason the caller puts in its error message. In order:

1. size (the setting ``max_response_size``, on the text as sent; I6), base64, and for HTTP-Redirect a
   raw DEFLATE inflated to a bounded size (a small query must not become megabytes of XML, I6);
2. one parse (sso.saml.structure.parse: no DTD, no entities) and the one shape of a logout message
   (sso.saml.structure.check_logout: I2, so the element verified is the element read);
3. signatures, by the single verifier of the ACS (sso.saml.signature), with the provider's
   configured certificates only: an XML signature on the message (HTTP-POST) and the query
   signature (HTTP-Redirect, over the parameters exactly as received, from the one reading of the
   query that also gave ``data``: sso.saml.slo_query). Each present one must
   verify; an unsigned message is refused when the provider wants them signed (the default);
4. the algorithm policy of the ACS (sso.saml.algorithms) on every algorithm used;
5. Issuer = the provider's IdP entity ID, Destination = our SLO URL (required when signed, as the SAML
   bindings say), at most 32 SessionIndexes, IssueInstant
   within ``logout_request_ttl`` + ``clock_skew`` of now, NotOnOrAfter (a LogoutRequest's) not past;
6. the message ID reserved in the replay store of the ACS (sso.saml.store): a second use is refused.
"""

import base64
import binascii
import logging
import zlib
from dataclasses import dataclass
from datetime import timedelta

import xmlsec
from django.utils import timezone

from sso import app_settings
from sso.saml import algorithms, config, instants, signature, slo_config, slo_query, store, structure, xml

logger = logging.getLogger("sso")

SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success"
KINDS = {"SAMLRequest": structure.LOGOUT_REQUEST, "SAMLResponse": structure.LOGOUT_RESPONSE}
# A deflated message inflates to at most this many bytes (and never past max_response_size). A real
# logout message is under 8 KiB; DEFLATE packs repetitive markup ~650:1, so with the former bound
# (4 x max_response_size = 1 MiB) a 1.8 KiB query became 250,000 elements parsed and walked: ~300 ms
# of CPU (I6, attack pass 14). At 64 KiB the parse and walks stay a few ms whatever the query.
MAX_INFLATED = 64 * 1024
# SessionIndexes one LogoutRequest may name (an IN list per request stays small, I6; IdPs send one).
MAX_SESSION_INDEXES = 32


class Refused(Exception):
    """The message is not used; ``str()`` is the reason, safe to show (no secret, no message text)."""


@dataclass
class Inbound:
    root: object  # the verified LogoutRequest or LogoutResponse (lxml element)
    binding: str  # "redirect" or "post"
    signed: bool

    @property
    def id(self):
        return self.root.get("ID")

    def child_text(self, namespace, name):
        element = self.root.find(xml.q(namespace, name))
        return "".join(element.itertext()).strip() if element is not None else None

    @property
    def name_id(self):
        return structure.name_id_value(self.root.find(structure.NAME_ID))  # as the ACS recorded it

    @property
    def name_id_format(self):
        element = self.root.find(xml.q(xml.SAML, "NameID"))
        return element.get("Format") if element is not None else None

    @property
    def session_indexes(self):
        return structure.requested_session_indexes(self.root)  # as the ACS recorded them (no stripping)

    @property
    def in_response_to(self):
        return self.root.get("InResponseTo")

    @property
    def status(self):
        status = self.root.find(xml.q(xml.SAMLP, "Status"))
        code = status.find(xml.q(xml.SAMLP, "StatusCode")) if status is not None else None
        return code.get("Value") if code is not None else None


def read(ctx, provider, param, data, binding, query=None):
    """The verified ``param`` ("SAMLRequest" or "SAMLResponse") message of ``data``; raises Refused.
    ``query``: for HTTP-Redirect, the slo_query.RedirectQuery that ``data`` is the values of."""
    settings = config.Settings.of(provider)
    encoded = data.get(param) or ""
    document = _decode(encoded, binding)
    try:
        root = structure.parse(document)
        structure.check_logout(root, KINDS[param])
    except structure.StructureRefused as refused:
        logger.info("SAML logout message refused: %s", refused)
        raise Refused("the message is not a well-formed logout message") from None
    signed = _verify(root, settings, data, param, binding, query)
    want = (slo_config.want_logout_request_signed(settings) if param == "SAMLRequest"
            else slo_config.want_logout_response_signed(settings))
    if want and not signed:
        raise Refused("the message is not signed")
    message = Inbound(root, binding, signed)
    _check_binding(ctx, provider, settings, message)
    until = _check_times(message, param)
    if not message.id or len(message.id) > 200:
        raise Refused("the message has no usable ID")
    if not store.reserve_logout_message(provider.provider_id, message.id, until):
        raise Refused("the message was already used")
    return message


def _decode(encoded, binding):
    limit = app_settings.saml.max_response_size
    if not isinstance(encoded, str) or len(encoded) > limit:
        raise Refused(f"the message exceeds the maximum allowed size ({limit} bytes)")
    try:
        decoded = base64.b64decode("".join(encoded.split()), validate=True)
    except (binascii.Error, ValueError):
        raise Refused("the message is not valid base64") from None
    if binding == "redirect":
        inflater = zlib.decompressobj(-15)
        try:
            decoded = inflater.decompress(decoded, min(limit, MAX_INFLATED))
        except zlib.error:
            raise Refused("the message is not valid DEFLATE data") from None
        if inflater.unconsumed_tail:
            raise Refused("the message inflates past the maximum allowed size")
    if b"<" not in decoded:
        raise Refused("the message is not XML")
    return decoded


def _certificates(settings):
    return [signature.certificate_pem(body) for body in settings.signing_certificates]


def _verify(root, settings, data, param, binding, query):
    """True when a signature covers the message (each one present verified), False when none does."""
    found = xml.algorithms(root)
    signed = False
    try:
        if root.find(structure.SIGNATURE) is not None:
            signature.verify_element(root, _certificates(settings))
            signed = True
        if binding == "redirect" and data.get("Signature"):
            sig_alg = data.get("SigAlg") or ""
            found[0].append(sig_alg)
            if query is None:
                raise Refused("an HTTP-Redirect signature without the query it covers")
            signature.verify_redirect(query.signed_octets(param), sig_alg, _signature_value(data["Signature"]),
                                      _certificates(settings))
            signed = True
    except slo_query.QueryRefused as refused:
        raise Refused(str(refused)) from None
    except (signature.Refused, xmlsec.Error) as error:
        logger.info("SAML logout message signature refused: %s", error)
        raise Refused("the signature does not verify with the provider's certificates") from None
    except config.ConfigError:
        raise Refused("the provider's certificates cannot be used") from None
    try:
        algorithms.check_all(found)
    except algorithms.AlgorithmRefused as refused:
        raise Refused(refused.message) from None
    return signed


def _signature_value(value):
    try:
        return base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError, AttributeError):
        raise Refused("the Signature parameter is not valid base64") from None


def _check_binding(ctx, provider, settings, message):
    issuer = message.child_text(xml.SAML, "Issuer")
    if not issuer:
        raise Refused("the message has no Issuer")
    expected = settings.idp_entity_id
    if expected and issuer != expected:
        raise Refused("the message's Issuer is not this provider's IdP")
    destination = message.root.get("Destination")
    if destination is None and message.signed:
        # SAML bindings §3.4.5.2, §3.5.5.2: a signed message names where it is for. Without it, a message
        # the IdP signed for another of its SPs (same key, same NameID) could be replayed here.
        raise Refused("the signed message has no Destination")
    if destination is not None and destination != slo_config.slo_url(ctx, provider):
        raise Refused("the message's Destination is not this provider's SLO URL")
    if len(message.session_indexes) > MAX_SESSION_INDEXES:
        raise Refused(f"the message names more than {MAX_SESSION_INDEXES} SessionIndexes")


def _check_times(message, param):
    """The moment until which the message's ID stays reserved; raises Refused when it is stale.

    Instants are read and compared by sso.saml.instants (as the ACS's): now moves by the skew, never
    the IdP's instant, so an instant at the end of the datetime range is compared, not overflowed."""
    now = timezone.now()
    skew = timedelta(milliseconds=app_settings.saml.clock_skew)
    lifetime = timedelta(milliseconds=app_settings.saml.logout_request_ttl)
    issued = instants.parse(message.root.get("IssueInstant"))
    if issued is None:
        raise Refused("the message has no valid IssueInstant")
    if issued > now + skew:
        raise Refused("the message is not yet valid")
    if issued < now - lifetime - skew:
        raise Refused("the message has expired")
    until = instants.later(issued, lifetime + skew)
    if param == "SAMLRequest" and message.root.get("NotOnOrAfter"):
        not_on_or_after = instants.parse(message.root.get("NotOnOrAfter"))
        if not_on_or_after is None or instants.passed(not_on_or_after, now, skew):
            raise Refused("the message has expired")
    return until
