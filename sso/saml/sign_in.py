"""SP-initiated SAML sign-in: the AuthnRequest over the HTTP-Redirect binding (sso.md §3, §5).

``start`` is called by ``sso.signin.start`` with the same signature as the OIDC protocol module and
answers ``(url, cookie_key, state_key)``; the endpoint turns that into ``{url, redirect: true}`` and
the signed ``relay_state`` cookie.
"""

import uuid

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT

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
        url = _redirect_url(ctx, provider, destination, request_id, pending.key)
    except config.ConfigError:
        raise APIError(400, codes.SAML_CONFIG_INVALID) from None
    if app_settings.saml.enable_in_response_to_validation:
        store.remember_request(provider, request_id)
    store.purge_expired()  # keeps the request and tombstone tables at their live size
    return url, RELAY_STATE_COOKIE, pending.key


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
