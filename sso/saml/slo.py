"""SAML Single Logout (docs/saml-slo.md; better-auth's ``initiateSLO`` and ``sloEndpoint``).

- :func:`record` (called by the ACS): keep the provider, NameID and SessionIndex of the session it
  opened, in :class:`sso.models.SamlSession`.
- :func:`initiate`: SP-initiated logout. The caller's session names its NameID and SessionIndex; we
  store our LogoutRequest's ID with the callbackURL, end the session, and send the browser to the
  IdP with the signed LogoutRequest.
- :func:`receive`: the IdP's LogoutRequest (end every session its NameID, and SessionIndex if
  given, names for this provider; no cookie needed, answer a signed LogoutResponse), or the
  LogoutResponse to our own request (InResponseTo must name a request we sent for this provider,
  once; then to the stored callbackURL).

Every incoming message is checked by sso.saml.slo_inbound (the single verifier and the replay store of
the ACS) before anything in it is used. Errors are JSON, better-auth's codes; why a message was
refused is in the message.
"""

import logging

from authservice import links, origins, signals
from authservice.errors import APIError, codes
from authservice.flows import sessions
from authservice.models import Session
from sso import app_settings, default_providers, provider_claims
from sso import signals as sso_signals
from sso.errors import codes as sso_codes  # noqa: F401 - registers the SSO codes
from sso.models import SamlSession, SsoProvider
from sso.saml import config, redirects, slo_config, slo_inbound, slo_outbound, slo_query, store

logger = logging.getLogger("sso")

MISSING_DATA = "missing_logout_data"


def enabled():
    return bool(app_settings.saml.enable_single_logout)


def _require_enabled():
    if not enabled():
        raise APIError(400, codes.SINGLE_LOGOUT_NOT_ENABLED)


def _saml_provider(provider_id):
    # A settings provider has no row for SamlSession to name: Single Logout is for stored providers.
    provider = None if provider_id in default_providers.ids() else \
        SsoProvider.objects.filter(provider_id=provider_id).first()
    if provider is None or not provider.saml_config:
        raise APIError(404, codes.SAML_PROVIDER_NOT_FOUND)
    provider_claims.refuse_row(provider)
    return provider


# --- at sign-in -----------------------------------------------------------------------------------
def record(session, provider, name_id, session_index):
    """Keep what a later logout needs of ``session`` (opened by ``provider``'s Assertion): the NameID
    and SessionIndex whole, as verified (a prefix is another identifier; SamlSession indexes a digest)."""
    if session is None or not name_id or default_providers.is_from_settings(provider):
        return
    # One INSERT: the session was created by this very sign-in, so it has no record yet (an
    # update_or_create cost a locking SELECT, two savepoints and a transaction of its own on every ACS).
    SamlSession.objects.create(session=session, provider=provider, name_id=name_id,
                               session_index=session_index or None)


# --- SP-initiated -----------------------------------------------------------------------------------
def initiate(ctx, provider_id, callback_url=None):
    """End the caller's session and answer the IdP-bound Outgoing (redirect URL or form)."""
    _require_enabled()
    if callback_url and not origins.is_allowed_url(callback_url):
        raise APIError(403, codes.INVALID_CALLBACK_URL)
    provider = _saml_provider(provider_id)
    settings = config.Settings.of(provider)
    service = slo_config.service(settings)
    if service is None:
        raise APIError(400, codes.IDP_SLO_NOT_SUPPORTED)
    if not settings.signing_key:
        raise APIError(400, codes.SAML_LOGOUT_SIGNING_KEY_MISSING)
    found = sessions.get_session(ctx)
    saml_session = SamlSession.objects.filter(session_id=found.session.pk, provider=provider).first()
    if saml_session is None:
        raise APIError(400, codes.SAML_LOGOUT_SESSION_NOT_SAML)
    request_id = slo_outbound.new_id()
    text = slo_outbound.logout_request(settings, request_id, service.target(False), saml_session.name_id,
                                       settings.name_id_format, saml_session.session_index)
    try:
        outgoing = slo_outbound.bind(settings, service, "SAMLRequest", text)
    except config.ConfigError:
        raise APIError(400, codes.SAML_CONFIG_INVALID) from None
    store.remember_logout_request(provider, request_id, callback_url or links.base(ctx))
    store.purge_expired()
    sessions.end_session(ctx)
    return outgoing


# --- from the IdP -----------------------------------------------------------------------------------
def receive(ctx, provider_id, data, binding, raw_query=""):
    """Handle a LogoutRequest or LogoutResponse; answers an Outgoing or a redirect URL (str).

    HTTP-Redirect: ``data`` is replaced by the values of the one reading of ``raw_query`` whose
    parts the query signature is checked over (sso.saml.slo_query, I2)."""
    _require_enabled()
    query = None
    if binding == "redirect":
        try:
            query = slo_query.RedirectQuery.parse(raw_query)
        except slo_query.QueryRefused as refused:
            code = codes.INVALID_LOGOUT_RESPONSE if data.get("SAMLResponse") else codes.INVALID_LOGOUT_REQUEST
            raise _refused(code, refused) from None
        data = query.values
    if not data.get("SAMLRequest") and not data.get("SAMLResponse"):
        target = redirects.success_url(ctx)
        return links.with_error(target, "invalid_request", MISSING_DATA)
    provider = _saml_provider(provider_id)
    if data.get("SAMLResponse"):
        return _logout_response(ctx, provider, data, binding, query)
    return _logout_request(ctx, provider, data, binding, query)


def _logout_response(ctx, provider, data, binding, query):
    try:
        message = slo_inbound.read(ctx, provider, "SAMLResponse", data, binding, query)
    except slo_inbound.Refused as refused:
        raise _refused(codes.INVALID_LOGOUT_RESPONSE, refused) from None
    if not message.in_response_to:
        raise _refused(codes.INVALID_LOGOUT_RESPONSE, "it answers no LogoutRequest of ours (unsolicited)")
    try:
        stored = store.consume_logout_request(provider.provider_id, message.in_response_to)
    except store.RequestRefused:
        raise _refused(codes.INVALID_LOGOUT_RESPONSE,
                       "it answers no pending LogoutRequest of ours for this provider") from None
    if message.status != slo_inbound.SUCCESS:
        logger.warning("SAML LogoutResponse for %s says %s", provider.provider_id, message.status)
        raise APIError(400, codes.LOGOUT_FAILED_AT_IDP)
    # The session and its cookies ended when the request was sent. Nothing is cleared here: anyone may
    # hold a valid LogoutResponse (to their own request) and make a victim's browser deliver it.
    callback = stored.get("callbackURL")
    return callback if redirects.is_safe(ctx, callback) else links.public_origin(ctx)


def _logout_request(ctx, provider, data, binding, query):
    settings = config.Settings.of(provider)
    service = slo_config.service(settings, prefer=binding)
    if service is None:
        raise APIError(400, codes.IDP_SLO_NOT_SUPPORTED)
    try:
        message = slo_inbound.read(ctx, provider, "SAMLRequest", data, binding, query)
    except slo_inbound.Refused as refused:
        raise _refused(codes.INVALID_LOGOUT_REQUEST, refused) from None
    if not message.name_id:
        raise _refused(codes.INVALID_LOGOUT_REQUEST, "it names no NameID")
    ended = end_sessions(provider, message.name_id, message.session_indexes)
    own = sessions.cookie_token(ctx)
    if own is not None and own in ended:
        sessions.clear_session_cookies(ctx)  # this browser's session was among them
    text = slo_outbound.logout_response(settings, slo_outbound.new_id(), service.target(True), message.id)
    try:
        return slo_outbound.bind(settings, service, "SAMLResponse", text, data.get("RelayState"))
    except config.ConfigError:
        raise APIError(400, codes.SAML_CONFIG_INVALID) from None


def end_sessions(provider, name_id, session_indexes=()):
    """Delete the sessions ``provider``'s IdP opened for ``name_id`` (only those of one of
    ``session_indexes`` when given); returns their tokens. Each sends ``session_revoked``."""
    query = SamlSession.of_name_id(provider, name_id)
    if session_indexes:
        query = query.filter(session_index__in=list(session_indexes))
    ended = list(Session.objects.filter(pk__in=query.values("session_id")).select_related("user"))
    Session.objects.filter(pk__in=[session.pk for session in ended]).delete()
    for session in ended:
        signals.session_revoked.send(sender=Session, user=session.user, session=session)
    sso_signals.saml_logout_requested.send(sender=SsoProvider, provider=provider, name_id=name_id,
                                           session_indexes=list(session_indexes), sessions=ended)
    logger.info("SAML Single Logout for %s ended %d session(s)", provider.provider_id, len(ended))
    return {session.token for session in ended}


def _refused(code, reason):
    message = f"{APIError(400, code).message}: {reason}"
    logger.info("SAML logout message refused: %s", message)
    return APIError(400, code, message)
