"""The Assertion Consumer Service (sso.md §5 "ACS", §9, §10): one SAMLResponse in, one 302 out.

``consume(ctx, provider_id, saml_response, relay_state)`` returns the Location of the redirect, or
raises a JSON APIError for the two cases the spec answers in JSON (unknown provider, unverified
domain). Every other failure is an error redirect and leaves no session and no new user.

Checks run in the spec's order: size, RelayState (and its cookie, I9), provider, domain gate,
base64, XML safety, one assertion, Issuer, then sso.saml.verified (the structural policy against
signature wrapping, every signature by a configured cert, decryption, wantAssertionsSigned: I2),
then pysaml2 on the same bytes (status, time conditions with clockSkew, Audience, Destination,
Recipient), a check that pysaml2 read the verified elements, then what pysaml2 does not do:
algorithm policy, requireTimestamps, every AudienceRestriction, InResponseTo against the database,
RelayState provider binding, the replay tombstone, NameID (from the verified Assertion) and e-mail.
"""

import base64
import binascii
import logging
from dataclasses import dataclass

from saml2 import BINDING_HTTP_POST
from saml2.response import StatusError
from saml2.sigver import SignatureError
from saml2.validate import ResponseLifetimeExceed, ToEarly

from authservice import db
from authservice.errors import APIError
from authservice.flows.external_identity import SignInFailure, SignInRefused, failure_location
from sso import app_settings, default_providers, signin, state
from sso.errors import codes
from sso.models import SsoProvider
from sso.saml import algorithms, config, instants, mapping, redirects, sign_in, slo, store, structure, xml
from sso.saml.sign_in import RELAY_STATE_COOKIE
from sso.saml.verified import VerificationRefused
from sso.saml.verified import verify_response as verified_response

logger = logging.getLogger("sso")

INVALID = "Invalid SAML response"
AUDIENCE_MISMATCH = "SAML assertion audience does not match this Service Provider"
RECIPIENT_MISMATCH = "SAML assertion recipient does not match this Service Provider"
DESTINATION_MISMATCH = "SAML response destination does not match this Service Provider"
SIGNATURE_REQUIRED = "SAML assertion signature is required"
BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer"


@dataclass
class IdpInitiated:
    """What ``sso.signin.complete`` needs when no RelayState started the flow."""

    provider_ref: dict
    request_sign_up: bool = False
    callback_url: str | None = None
    error_url: str | None = None


def consume(ctx, provider_id, saml_response, relay_state=None):
    """Validate ``saml_response`` for ``provider_id`` and sign the user in; returns the 302 Location."""
    provider = default_providers.find(provider_id)
    if provider is not None and not provider.saml_config:
        provider = None
    limit = app_settings.saml.max_response_size
    if isinstance(saml_response, str) and len(saml_response) > limit:
        too_large = SignInFailure("saml_error", f"SAML response exceeds maximum allowed size ({limit} bytes)")
        return failure_location(ctx, redirects.success_url(ctx, provider), too_large)
    # From here the RelayState is consumed, so its cookie has served (a too large response above
    # leaves both in place: the RelayState was not read).
    ctx.delete_cookie(RELAY_STATE_COOKIE)
    pending, relay_error = _relay_state(ctx, relay_state)
    if provider is None:
        raise APIError(404, codes.SAML_PROVIDER_NOT_FOUND)
    signin.check_domain_verified(provider)
    try:
        return _consume(ctx, provider, saml_response or "", pending, relay_error)
    except SignInFailure as failure:
        target = (redirects.success_url(ctx, provider, pending) if failure.to_success
                  else redirects.error_url(ctx, provider, pending))
        logger.info("SAML response for %s refused: %s %s", provider_id, failure.error, failure.description or "")
        return failure_location(ctx, target, failure)


def _relay_state(ctx, relay_state):
    """The pending sign-in of ``relay_state``, and the error that refuses it (or None).

    SP-initiated state is bound to the browser that started it (I9): that browser holds the signed
    ``relay_state`` cookie sso.saml.sign_in set, and the ACS refuses a RelayState that arrives
    without it. Otherwise an attacker could start a sign-in, get the IdP's response for their own
    account, and have a victim's browser post it (login CSRF). No RelayState (IdP-initiated, when
    allowed) needs no cookie. The state is consumed either way, as OIDC's is."""
    if not relay_state:
        return None, None
    try:
        pending = state.consume(relay_state)
    except state.StateError:
        return None, "invalid_or_expired_relay_state"
    if not sign_in.is_bound_to_browser(ctx, relay_state):
        return pending, "relay_state_mismatch"
    return pending, None


def _consume(ctx, provider, saml_response, pending, relay_error):
    document, root = _parse(saml_response)
    settings = config.Settings.of(provider)
    issuer = _check_issuer(root, settings)
    found_algorithms = xml.algorithms(root)  # before decryption replaces the EncryptedKey
    verified = _verify_signatures(document, root, settings)
    try:
        with config.client(ctx, provider, issuer=issuer, audience=_audience(root, settings)) as (client, settings):
            authn = _verify(client, saml_response, root, settings, ctx)
    except config.ConfigError:
        raise SignInFailure("saml_error", INVALID) from None
    try:
        verified.check_agrees(authn)  # pysaml2 read the very elements whose signatures were checked
    except VerificationRefused as refused:
        logger.warning("SAML response refused: %s", refused)
        raise SignInFailure("saml_error", INVALID) from None
    if verified.response.find(xml.q(xml.SAML, "EncryptedAssertion")) is not None:
        _check_issuer(verified.assertion, settings)
    assertion = authn.assertion
    _check_algorithms(found_algorithms, verified)
    _check_timestamps(assertion)
    _check_audiences(assertion, settings)
    _check_recipients(assertion, settings.acs_urls(ctx))
    request = _check_in_response_to(provider, authn, assertion)
    flow = _check_relay_state(provider, pending, relay_error)
    _check_answers_this_browser(pending, request)
    _reserve(provider, assertion)
    try:
        identity = mapping.identity(verified.name_id, assertion, settings.config)
    except mapping.MappingError as error:
        raise SignInFailure("saml_error", str(error)) from None
    try:
        signed_in = signin.complete(ctx, flow, identity)
    except SignInRefused as refused:  # sso.md §6.3: to the success URL, better-auth's phrase with "_"
        raise SignInFailure(refused.code, to_success=True) from None
    except APIError as error:
        raise SignInFailure.from_api_error(error) from None
    # What Single Logout needs later, read from the verified Assertion (I2).
    slo.record(signed_in.session, provider, verified.name_id, verified.session_index)
    return redirects.success_url(ctx, provider, pending)


# --- the raw document -----------------------------------------------------------------------------
def _parse(saml_response):
    """``(bytes, root)`` of the response: the only parse of it on our side (sso.saml.structure)."""
    try:
        decoded = base64.b64decode("".join(saml_response.split()), validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if b"<" not in decoded:
        raise SignInFailure("saml_invalid_encoding", "Invalid base64-encoded SAML response")
    try:
        root = structure.parse(decoded)
    except structure.StructureRefused:
        raise SignInFailure("saml_invalid_xml", "Invalid SAML response XML") from None
    if root.tag != xml.q(xml.SAMLP, "Response"):
        raise SignInFailure("saml_invalid_xml", "Invalid SAML response XML")
    count = xml.assertion_count(root)
    if count == 0:
        raise SignInFailure("saml_no_assertion", "SAML response contains no assertion")
    if count > 1:
        raise SignInFailure("saml_multiple_assertions", "SAML response contains multiple assertions")
    return decoded, root


def _verify_signatures(document, root, settings):
    """sso.saml.verified: the structural policy and every signature, checked once; what it returns
    is what the ACS reads (security.md I2)."""
    try:
        return verified_response(document, root, settings.signing_certificates,
                                 decryption_key=settings.decryption_key_pem(),
                                 want_assertions_signed=settings.want_assertions_signed)
    except config.ConfigError:
        raise SignInFailure("saml_error", INVALID) from None
    except VerificationRefused as refused:
        logger.info("SAML response refused by the verifier: %s", refused)
        if refused.signature_required:
            raise SignInFailure("invalid_saml_response", SIGNATURE_REQUIRED) from None
        raise SignInFailure("saml_error", INVALID) from None


def _check_issuer(root, settings):
    """Every Issuer in the document must be this provider's IdP; returns the Issuer seen."""
    issuers = {xml.text_of(element) for element in root.iter(xml.q(xml.SAML, "Issuer"))}
    expected = settings.idp_entity_id
    if expected and issuers - {expected}:
        raise SignInFailure("saml_error", "SAML response issuer does not match this provider")
    return next(iter(issuers), None) if len(issuers) == 1 else None


def _audience(root, settings):
    """Which accepted audience pysaml2 should expect: the one the (still unverified) document names,
    so either the SP entity ID or ``audience`` passes; the verified values are checked afterwards."""
    named = {xml.text_of(element) for element in root.iter(xml.q(xml.SAML, "Audience"))}
    return next((value for value in settings.audiences if value in named), settings.audiences[-1])


# --- pysaml2 ------------------------------------------------------------------------------------
def _verify(client, saml_response, root, settings, ctx):
    """pysaml2's verification; its exceptions become the spec's error/error_description."""
    destination = root.get("Destination")
    if destination and destination not in settings.acs_urls(ctx):
        # pysaml2 only answers None here; checked after it so a bad signature still wins.
        mismatch = SignInFailure("invalid_saml_response", DESTINATION_MISMATCH)
    else:
        mismatch = None
    try:
        authn = client.parse_authn_request_response("".join(saml_response.split()), BINDING_HTTP_POST)
    except SignatureError as exc:
        # A signed Response whose Assertion lacks the signature wantAssertionsSigned asks for; with
        # no signature at all, the base rule (Response OR Assertion signed) fails first.
        if "Signature missing for assertion" in str(exc) and settings.want_assertions_signed \
                and root.find(xml.q(xml.DS, "Signature")) is not None:
            raise SignInFailure("invalid_saml_response", SIGNATURE_REQUIRED) from None
        raise SignInFailure("saml_error", INVALID) from None
    except ResponseLifetimeExceed:
        raise SignInFailure("saml_error", "SAML assertion has expired") from None
    except ToEarly:
        raise SignInFailure("saml_error", "SAML assertion is not yet valid") from None
    except StatusError:
        raise SignInFailure("saml_error", "SAML response status is not Success") from None
    except Exception as exc:  # noqa: BLE001 - pysaml2 raises bare Exceptions for some checks
        raise _mapped(exc) from None
    if authn is None:
        raise mismatch or SignInFailure("saml_error", INVALID)
    if mismatch is not None:
        raise mismatch
    if authn.assertion is None or not authn.assertion.id:
        raise SignInFailure("saml_error", INVALID)
    return authn


def _mapped(exc):
    text = str(exc)
    if "AudienceRestrictions" in text:
        return SignInFailure("invalid_saml_response", AUDIENCE_MISMATCH)
    if "No valid recipient" in text:
        return SignInFailure("invalid_saml_response", RECIPIENT_MISMATCH)
    logger.info("pysaml2 refused a SAML response: %s: %s", type(exc).__name__, text[:300])
    return SignInFailure("saml_error", INVALID)


# --- what pysaml2 leaves to us --------------------------------------------------------------------
def _check_algorithms(found, verified):
    """The algorithm policy over the document as received and, when it was encrypted, the
    decrypted Assertion (its own signature's algorithms)."""
    found = [list(uris) for uris in found]
    if verified.response.find(xml.q(xml.SAML, "EncryptedAssertion")) is not None:
        for bucket, uris in zip(found, xml.algorithms(verified.assertion), strict=True):
            bucket.extend(uris)
    try:
        algorithms.check_all(found)
    except algorithms.AlgorithmRefused as refused:
        raise SignInFailure(refused.error, refused.message) from None


def _check_timestamps(assertion):
    conditions = assertion.conditions
    if conditions is not None and (conditions.not_before or conditions.not_on_or_after):
        return
    if app_settings.saml.require_timestamps:
        raise SignInFailure("saml_error", "SAML assertion is missing timestamps")
    logger.info("SAML assertion %s has no NotBefore/NotOnOrAfter conditions", assertion.id)


def _check_audiences(assertion, settings):
    conditions = assertion.conditions
    for restriction in (conditions.audience_restriction if conditions is not None else []) or []:
        values = {(audience.text or "").strip() for audience in restriction.audience or []}
        if not values & set(settings.audiences):
            raise SignInFailure("invalid_saml_response", AUDIENCE_MISMATCH)


def _check_recipients(assertion, acs_urls):
    """Every bearer SubjectConfirmationData names one of our ACS URLs (pysaml2 skips this check
    unless it is given conversation info)."""
    confirmations = (assertion.subject.subject_confirmation if assertion.subject else []) or []
    for confirmation in confirmations:
        if confirmation.method != BEARER:
            continue
        data = confirmation.subject_confirmation_data
        if data is None or (data.recipient or "").strip() not in acs_urls:
            raise SignInFailure("invalid_saml_response", RECIPIENT_MISMATCH)


def _in_response_to(authn, assertion):
    values = {authn.response.in_response_to} if authn.response.in_response_to else set()
    for confirmation in (assertion.subject.subject_confirmation if assertion.subject else []) or []:
        data = confirmation.subject_confirmation_data
        if data is not None and data.in_response_to:
            values.add(data.in_response_to)
    if len(values) > 1:
        raise SignInFailure("invalid_saml_response", "Unknown or expired request ID")
    return next(iter(values), None)


def _check_in_response_to(provider, authn, assertion):
    """The stored AuthnRequest the response answers (consumed), or None when it answers none."""
    if not app_settings.saml.enable_in_response_to_validation:
        return None
    request_id = _in_response_to(authn, assertion)
    if request_id is None:
        if not app_settings.saml.allow_idp_initiated:
            raise SignInFailure("unsolicited_response", "IdP-initiated SSO not allowed")
        return None
    try:
        return store.consume_request(provider.provider_id, request_id)
    except store.RequestRefused as refused:
        raise SignInFailure("invalid_saml_response", refused.description) from None


def _check_answers_this_browser(pending, request):
    """An answer to one of our stored AuthnRequests is SP-initiated: it must come back with the
    RelayState that request went out with, which _relay_state has already tied to this browser's
    cookie (I9). Without this, dropping the RelayState would turn the attacker's own response into
    an "IdP-initiated" one that any browser could post (login CSRF). With InResponseTo validation
    off (``request`` None) responses are not tied to requests at all, as the operator chose."""
    if request is None:
        return
    if pending is None:
        raise SignInFailure("invalid_state", "relay_state_missing")
    expected = request.get("relayState")
    if expected is not None and expected != pending.key:
        raise SignInFailure("invalid_state", "relay_state_mismatch")


def _check_relay_state(provider, pending, relay_error):
    if relay_error:
        raise SignInFailure("invalid_state", relay_error)
    if pending is None:
        return IdpInitiated(provider_ref=provider.provider_ref())
    ref = pending.provider_ref
    if not isinstance(ref, dict) or not ref.get("providerId") or not ref.get("fingerprint"):
        raise SignInFailure("invalid_state", "sso_provider_reference_missing_or_invalid")
    if ref["providerId"] != provider.provider_id:
        raise SignInFailure("invalid_state", "sso_provider_reference_mismatch")
    if ref.get("rowId") != provider.pk or ref["fingerprint"] != provider.fingerprint():
        raise SignInFailure("invalid_state", "sso_provider_changed_during_authentication")
    return pending


def _not_on_or_after(assertion):
    """The Conditions' NotOnOrAfter by the one reader of instants (shared with Single Logout); None
    when there is none. One pysaml2 accepted but we cannot read is refused: the replay tombstone must
    last as long as the assertion does, so it cannot fall back to a short default."""
    value = assertion.conditions.not_on_or_after if assertion.conditions is not None else None
    if not value:
        return None
    parsed = instants.parse(value)
    if parsed is None:
        raise SignInFailure("saml_error", INVALID)
    return parsed


def _reserve(provider, assertion):
    if len(assertion.id) > 200:
        raise SignInFailure("saml_error", INVALID)
    if not store.reserve_assertion(provider.provider_id, assertion.id, _not_on_or_after(assertion)):
        raise SignInFailure("replay_detected", "SAML assertion has already been used")
