"""OIDC sign-in at an SSO provider: the authorization URL (sso.md §3) and the callback (§3, §9).

``start`` stores the pending sign-in (state, PKCE verifier, nonce) and builds the IdP URL;
``finish`` consumes the state, exchanges the code, verifies the ID token, maps the claims and hands
the identity to ``sso.signin.complete``. Every failure of ``finish`` is an error redirect (§9) and
leaves no user and no session behind; only the domain-verification gate answers JSON.
"""

import base64
import hashlib
import logging
from urllib.parse import urlencode

from django.core.exceptions import SuspiciousOperation

from authservice import app_settings, cookies, db, links, tokens
from authservice.errors import APIError
from authservice.flows.external_identity import SignInFailure, failure_location
from authservice.social.base import Tokens
from sso import app_settings as sso_settings
from sso import default_providers, discovery, issuers, linking, signin, state
from sso.errors import RedirectError as R
from sso.models import SsoProvider
from sso.oidc.verification import OIDCFailure, ProviderOIDCBackend
from sso.stored import as_dict

logger = logging.getLogger("sso")

DEFAULT_SCOPES = ("openid", "email", "profile", "offline_access")
PKCE_ALPHABET = tokens.ALNUM + "-._~"  # RFC 7636 unreserved characters
STATE_COOKIE = cookies.STATE


def redirect_uri(ctx, provider_id):
    """Where the IdP sends the browser back: the shared ``redirect_uri`` setting, else the provider's
    own callback. The code exchange sends the same value, as OAuth requires."""
    shared = sso_settings.redirect_uri
    if shared:
        return shared if shared.startswith(("http://", "https://")) else f"{links.base(ctx)}{shared}"
    return f"{links.base(ctx)}/sso/callback/{cookies.encode_component(provider_id)}"


def pkce_challenge(verifier):
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def endpoints(provider):
    """The provider's oidcConfig, with discovery run when an endpoint the flow needs is missing (§4)."""
    config = dict(provider.oidc_config or {})
    if not discovery.needs_discovery(config):
        return config
    return discovery.discover(provider.issuer, config)


# --- sign-in ------------------------------------------------------------------------------------
def start(ctx, provider, body):
    config = endpoints(provider)
    use_pkce = config.get("pkce", True) is not False
    verifier = tokens.random_string(128, PKCE_ALPHABET)
    nonce = tokens.random_string(32, tokens.URL_SAFE)
    scopes = body.get("scopes") or config.get("scopes") or list(DEFAULT_SCOPES)
    pending = state.store(
        provider, callback_url=body["callbackURL"], error_url=body.get("errorCallbackURL"),
        new_user_url=body.get("newUserCallbackURL"), request_sign_up=body.get("requestSignUp", False),
        code_verifier=verifier if use_pkce else None, nonce=nonce, scopes=scopes,
    )
    params = [("response_type", "code"), ("client_id", config.get("clientId") or ""), ("state", pending.key),
              ("scope", " ".join(scopes)), ("redirect_uri", redirect_uri(ctx, provider.provider_id))]
    login_hint = body.get("loginHint") or body.get("email")
    if login_hint:
        params.append(("login_hint", login_hint))
    if use_pkce:
        params += [("code_challenge_method", "S256"), ("code_challenge", pkce_challenge(verifier))]
    params.append(("nonce", nonce))
    params += list((body.get("additionalParams") or {}).items())
    endpoint = config["authorizationEndpoint"]
    url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)
    return url, STATE_COOKIE, pending.key


# --- callback -----------------------------------------------------------------------------------
def default_error_url(ctx):
    return app_settings.error_url or f"{links.base(ctx)}/error"


def finish(ctx, provider_id, query):
    """The Location of the callback's 302: the app on success, the error target otherwise (every
    failure is the core flow's one SignInFailure, rendered by its one function, sso.md §9).

    ``provider_id`` ``None``: the shared callback, whose provider is the one the state was stored for
    (server-side, so the browser cannot choose it).
    """
    ctx.delete_cookie(STATE_COOKIE)
    try:
        pending = _pending(ctx, query)
        try:
            shared = provider_id is None
            if shared:
                provider_id = (pending.provider_ref or {}).get("providerId")
                if not provider_id:
                    raise SignInFailure(R.INVALID_STATE, "missing_provider_id")
                if not query.get("iss") and not query.get("error"):
                    # One redirect URI for several issuers: only RFC 9207's iss tells which one issued
                    # this code. Without it a code from honest IdP A, delivered with the state of a
                    # sign-in at attacker IdP B, would be sent to B's token endpoint (mix-up, RFC 9700
                    # §4.4; attack 14). IdPs that send no iss use the per-provider callbacks.
                    raise SignInFailure(R.INVALID_PROVIDER, "issuer_missing")
            return _finish(ctx, provider_id, pending, query, shared=shared)
        except SignInFailure as failure:
            failure.target = failure.target or pending.error_url
            raise
    except SignInFailure as failure:
        return failure_location(ctx, default_error_url(ctx), failure)


def _pending(ctx, query):
    key = query.get("state")
    if not key:
        raise SignInFailure(R.STATE_NOT_FOUND)
    try:
        pending = state.consume(key)
    except state.StateError as error:
        raise SignInFailure(error.error, target=error.error_url) from None
    cookie = ctx.signed_cookie(STATE_COOKIE)
    if cookie is None or not tokens.constant_time_equals(cookie, key):
        raise SignInFailure(R.STATE_MISMATCH, target=pending.error_url)
    return pending


def _finish(ctx, provider_id, pending, query, shared=False):
    if query.get("error") or not query.get("code"):
        raise SignInFailure(query.get("error") or R.INVALID_REQUEST,
                            query.get("error_description") or "authorization_code_not_found")
    provider = _provider(provider_id, pending)
    signin.check_domain_verified(provider)  # JSON 401, not a redirect (sso.md §3 step 4)
    if query.get("iss") and query["iss"] != provider.issuer:
        # RFC 9207: an authorization response from another issuer is a mix-up attack.
        raise SignInFailure(R.INVALID_PROVIDER, "issuer_mismatch")
    if shared and issuers.is_ambiguous(provider):
        # The iss above matched, but it would match another provider too: whose IdP answered is
        # unknown, so the code goes to no token endpoint (sso/issuers.py; attack 14d).
        raise SignInFailure(R.INVALID_PROVIDER, "issuer_ambiguous")
    identity = _identity(ctx, provider, pending, query["code"])
    try:
        # Refusals (SignInRefused) pass through as they are: OIDC writes better-auth's phrases.
        signed_in = signin.complete(ctx, pending, identity)
    except APIError as error:
        raise SignInFailure.from_api_error(error) from None
    if signed_in.is_new_user and pending.new_user_url:
        return pending.new_user_url
    return pending.callback_url


def _provider(provider_id, pending):
    ref = pending.provider_ref
    if not ref or not ref.get("providerId") or not ref.get("fingerprint"):
        raise SignInFailure(R.INVALID_STATE, "missing_sso_provider_reference")
    provider = default_providers.find(provider_id)
    if provider is None:
        raise SignInFailure(R.INVALID_PROVIDER, "provider not found")
    if ref["providerId"] != provider_id or ref.get("rowId") != provider.pk \
            or ref["fingerprint"] != provider.fingerprint():
        raise SignInFailure(R.INVALID_STATE, "sso_provider_changed_during_authentication")
    return provider


def _identity(ctx, provider, pending, code):
    try:
        config = endpoints(provider)
    except APIError as error:
        raise SignInFailure(R.DISCOVERY_FAILED, error.message or "unexpected_discovery_error") from None
    backend = ProviderOIDCBackend(provider, config)
    try:
        token = backend.get_token({
            "grant_type": "authorization_code", "code": code,
            "redirect_uri": redirect_uri(ctx, provider.provider_id),
            **({"code_verifier": pending.code_verifier} if pending.code_verifier else {}),
        })
        claims = _claims(backend, token, pending)
    except OIDCFailure as failure:
        raise SignInFailure(failure.error, failure.description) from None
    return map_identity(config, claims, token_set(token, pending.scopes))


def _claims(backend, token, pending):
    """UserInfo claims when an endpoint is configured, else the verified ID token's (§3 steps 7-8)."""
    id_claims = None
    if token.get("id_token"):
        try:
            id_claims = backend.verify_token(token["id_token"], nonce=pending.nonce)
        except SuspiciousOperation as exc:
            logger.info("SSO provider %s: ID token rejected: %s", backend.provider.provider_id, exc)
            raise OIDCFailure("token_not_verified") from None
        if not id_claims.get("sub"):
            raise OIDCFailure("id_token_subject_missing")
    if backend.OIDC_OP_USER_ENDPOINT and token.get("access_token"):
        return backend.get_userinfo(token["access_token"], token.get("id_token"), id_claims)
    if id_claims is None:
        raise OIDCFailure("user_info_endpoint_not_found")
    return id_claims


def token_set(token, requested_scopes):
    """The token response as ``Tokens``: the account's columns and the hooks' token set come from it."""
    granted = token.get("scope")
    scopes = granted.split() if isinstance(granted, str) and granted.strip() else list(requested_scopes)
    return Tokens(access_token=token.get("access_token"), refresh_token=token.get("refresh_token"),
                  id_token=token.get("id_token"), access_token_expires_at=linking.expiry(token.get("expires_in")),
                  refresh_token_expires_at=linking.expiry(token.get("refresh_expires_in")),
                  scopes=scopes, raw=token)


def map_identity(config, claims, tokens_):
    """sso.md §3 step 9: the mapped user info, ``attributes`` = the raw claims (SEED)."""
    mapping = as_dict(config.get("mapping"))
    email = claims.get(_claim(mapping, "email", "email"))
    if not isinstance(email, str) or not email.strip() or not claims.get("sub"):
        raise SignInFailure(R.INVALID_PROVIDER, "missing_user_info")
    verified_claim = claims.get(_claim(mapping, "emailVerified", "email_verified"))
    info = {
        "id": str(claims["sub"]),
        "email": email.strip().lower(),
        "name": claims.get(_claim(mapping, "name", "name")) or "",
        "emailVerified": bool(sso_settings.account_linking.trust_email_verified
                              and verified_claim in (True, "true")),
    }
    image = claims.get(_claim(mapping, "image", "picture"))
    if image:
        info["image"] = image
    for field_name, claim in as_dict(mapping.get("extraFields")).items():
        if isinstance(claim, str):
            info[field_name] = claims.get(claim)
    info["attributes"] = dict(claims)
    return linking.identity(info["id"], info, tokens_)


def _claim(mapping, key, default):
    value = mapping.get(key)
    return value if isinstance(value, str) and value else default
