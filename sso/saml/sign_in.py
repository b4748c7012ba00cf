"""SP-initiated SAML sign-in: the AuthnRequest over the HTTP-Redirect binding (sso.md §3, §5).

``start`` is called by ``sso.signin.start`` with the same signature as the OIDC protocol module and
answers ``(url, None, state_key)``: it sets the signed ``relay_state`` cookie itself (``bind``),
because that cookie needs other attributes than OIDC's, and the endpoint turns the rest into
``{url, redirect: true}``.
"""

import uuid

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT

from authservice import cookies, tokens
from authservice.errors import APIError
from sso import app_settings, state
from sso.errors import codes
from sso.saml import config, store

RELAY_STATE_COOKIE = "relay_state"


def start(ctx, provider, body):
    settings = config.Settings.of(provider)
    if settings.authn_requests_signed and not settings.signing_key:
        raise APIError(400, codes.SAML_SIGNING_KEY_MISSING)
    pending = state.store(
        provider, callback_url=body["callbackURL"], error_url=body.get("errorCallbackURL"),
        new_user_url=body.get("newUserCallbackURL"), request_sign_up=body.get("requestSignUp", False),
    )
    destination = settings.sso_url()
    request_id = "_" + str(uuid.uuid4())
    try:
        if settings.authn_requests_signed:
            config.signer_key(settings)  # the key can make signatureAlgorithm signatures (as for SLO)
        url = _redirect_url(ctx, provider, destination, request_id, pending.key)
    except config.ConfigError:
        raise APIError(400, codes.SAML_CONFIG_INVALID) from None
    if app_settings.saml.enable_in_response_to_validation:
        store.remember_request(provider, request_id, pending.key)
    store.purge_expired()  # keeps the request and tombstone tables at their live size
    bind(ctx, pending.key)
    return url, None, pending.key


def bind(ctx, relay_state):
    """Bind ``relay_state`` to this browser with the signed ``relay_state`` cookie (I9).

    The IdP answers with a form POST from its own site, so the cookie must travel on a cross-site
    top-level POST: ``SameSite=Lax`` cookies do not (and Chrome's two-minute "Lax+POST" grace only
    covers cookies with no SameSite attribute). With an https base URL it is ``SameSite=None;
    Secure``. Browsers drop ``SameSite=None`` without ``Secure``, so on plain http it stays ``Lax``:
    http is for development on loopback, where an IdP at ``127.0.0.1:<port>`` or ``localhost`` is
    same-site with the service (ports do not make a site), and the cookie arrives. HttpOnly and
    signed as before; it lives ``state.COOKIE_MAX_AGE`` seconds and the ACS expires it. The
    ``cookie_attributes.same_site`` setting does not apply to it: "strict" would fail every SAML
    sign-in, and "none" is what it has on https already.
    """
    attributes = cookies.attributes(state.COOKIE_MAX_AGE)
    attributes["samesite"] = "None" if attributes["secure"] else "Lax"
    ctx.response_cookies[cookies.cookie_name(RELAY_STATE_COOKIE)] = (cookies.signed_value(relay_state), attributes)


def is_bound_to_browser(ctx, relay_state):
    """True when this request carries the ``relay_state`` cookie ``bind`` set for ``relay_state``."""
    bound = ctx.signed_cookie(RELAY_STATE_COOKIE)
    return bound is not None and tokens.constant_time_equals(bound, relay_state)


def _redirect_url(ctx, provider, destination, request_id, relay_state):
    """The IdP URL carrying the deflated (and, when configured, signed) AuthnRequest."""
    with config.client(ctx, provider) as (client, settings):
        _, request = client.create_authn_request(
            destination, binding=BINDING_HTTP_POST, message_id=request_id,
            nameid_format=settings.name_id_format, allow_create="true", sign=False,
            assertion_consumer_service_url=settings.acs_url(ctx),
        )
        info = client.apply_binding(
            BINDING_HTTP_REDIRECT, str(request), destination, relay_state=relay_state,
            sign=settings.authn_requests_signed, sigalg=settings.signature_algorithm,
        )
    return dict(info["headers"])["Location"]
