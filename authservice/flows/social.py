"""Social sign-in: OAuth state, the callback, users and accounts from a provider (core.md §5.2–§5.4,
§4.19 link-social).

State lives in a verification row keyed by the state value (any server process can finish the flow
[D8]) and is bound to the browser by the signed ``state`` cookie; both must agree, and the row is
deleted on use, so a state works once. Every callback failure becomes a redirect to the error target
with ``?error=<code>``; nothing is written before the provider's answer has been verified.
"""

import json
import logging
import time
from datetime import timedelta

from django.utils import timezone

from authservice import app_settings, links, origins, signals, tokens, users
from authservice.cookies import STATE, signed_value
from authservice.errors import APIError, OAuthCallbackError as E, codes
from authservice.flows import external_identity
from authservice.flows.external_identity import SignInFailure, SignInRefused, failure_location
from authservice.models import Account, Verification
from authservice.social.base import ProviderError, Tokens
from authservice.social.registry import get_provider

logger = logging.getLogger("authservice.social")

STATE_EXPIRES_IN = 600  # seconds the verification row lives (core.md §5.2)
STATE_COOKIE_MAX_AGE = 300
STATE_URL_KEYS = ("callbackURL", "errorURL", "newUserURL")
CALLBACK_PARAMS = ("code", "state", "error", "error_description", "iss", "user", "device_id")


def require_provider(provider_id):
    provider = get_provider(provider_id)
    if provider is None:
        raise APIError(404, codes.PROVIDER_NOT_FOUND)
    return provider


def default_error_url(ctx):
    return app_settings.error_url or f"{links.base(ctx)}/error"


# --- starting a flow ---------------------------------------------------------------------------
START_URL_FIELDS = (("callbackURL", codes.INVALID_CALLBACK_URL),
                    ("errorCallbackURL", codes.INVALID_ERROR_CALLBACK_URL),
                    ("newUserCallbackURL", codes.INVALID_NEW_USER_CALLBACK_URL))


def _check_urls(body):
    """The router checks these on HTTP requests only; in-process calls meet the same rule here, since
    the callback will not follow a URL that fails it (see :func:`checked_redirect`)."""
    for key, code in START_URL_FIELDS:
        value = body.get(key)
        if value and not origins.is_allowed_url(value):
            raise APIError(403, code)


def start(ctx, provider, body, link=None):
    """The authorize URL for a new flow; writes the state row and the state cookie."""
    _check_urls(body)
    callback_url = body.get("callbackURL")
    if not callback_url:
        if not app_settings.base_url and ctx.request is None:
            raise APIError(400, codes.CALLBACK_URL_REQUIRED)
        callback_url = links.public_origin(ctx)
    state = tokens.random_string(32, tokens.URL_SAFE)
    verifier = tokens.random_string(128, tokens.URL_SAFE)
    nonce = tokens.random_string(32) if provider.requires_nonce else None
    try:
        url = provider.authorization_url(
            ctx, state=state, code_verifier=verifier, nonce=nonce, scopes=body.get("scopes") or (),
            login_hint=body.get("loginHint"), additional_params=body.get("additionalParams"))
    except ProviderError as exc:
        logger.warning("cannot start sign-in with %s: %s", provider.id, exc)
        raise APIError(400, codes.INVALID_OAUTH_CONFIGURATION) from None
    expires_at = timezone.now() + timedelta(seconds=STATE_EXPIRES_IN)
    # The client's free-form additionalData gets a namespace of its own: merged into the top level it
    # could supply any server key left empty (a ``link`` to another user's id, an unchecked errorURL,
    # requestSignUp), I1/I4. Every server key is always written, null when empty, and the callback
    # reads only these.
    value = {
        "callbackURL": callback_url, "codeVerifier": verifier, "errorURL": body.get("errorCallbackURL") or None,
        "newUserURL": body.get("newUserCallbackURL") or None, "link": link,
        "requestSignUp": body.get("requestSignUp"), "idTokenNonce": nonce,
        "expiresAt": int(expires_at.timestamp() * 1000), "oauthState": state, "providerId": provider.id,
        "additionalData": body.get("additionalData") or None,
    }
    Verification.objects.create(identifier=state, value=json.dumps(value), expires_at=expires_at)
    ctx.set_cookie(STATE, signed_value(state), max_age=STATE_COOKIE_MAX_AGE)
    return url


# --- the callback ------------------------------------------------------------------------------
def parse_callback_params(raw):
    """The known callback parameters; any non-string value makes the request unparsable."""
    found = {}
    for key in CALLBACK_PARAMS:
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or "\x00" in value:
            raise SignInFailure(E.INVALID_CALLBACK_REQUEST)
        found[key] = value
    return found


def checked_redirect(ctx, url):
    """``url`` if the browser may be sent there now, else None.

    I4, second line of defence: the start checked these URLs, but whatever a state holds is followed
    only if it passes the one URL rule again (or is our own origin, the default callbackURL).
    """
    if not isinstance(url, str) or not url:
        return None
    try:
        if url == links.public_origin(ctx) or origins.is_allowed_url(url):
            return url
    except origins.MalformedURL:
        pass
    logger.warning("state URL refused: %.200r", url)
    return None


def consume_state(ctx, state):
    """The state's data; the row is deleted and the cookie expired (single use, core.md §5.2)."""
    row = Verification.objects.filter(identifier=state).order_by("-created_at").first()
    data = None
    if row is not None:
        try:
            data = json.loads(row.value)
        except ValueError:
            data = None
    if not isinstance(data, dict) or not isinstance(data.get("codeVerifier"), str):
        raise SignInFailure(E.STATE_MISMATCH)  # nothing readable: the default target
    data.update({key: checked_redirect(ctx, data.get(key)) for key in STATE_URL_KEYS})
    error_url = data["errorURL"]
    cookie = ctx.signed_cookie(STATE)
    if data.get("oauthState", state) != state or not cookie or not tokens.constant_time_equals(cookie, state):
        raise SignInFailure(E.STATE_MISMATCH, target=error_url)
    ctx.delete_cookie(STATE)
    claimed = row.claim()  # of two concurrent callbacks with one state, only one claims it
    expires_at = data.get("expiresAt")
    if not claimed or not isinstance(expires_at, (int, float)) or expires_at < time.time() * 1000 \
            or row.expires_at < timezone.now():
        raise SignInFailure(E.STATE_MISMATCH, target=error_url)
    return data


def callback(ctx, provider_id, raw_params):
    """GET /callback/:provider: the URL to redirect to, success or failure (core.md §5.3)."""
    target = default_error_url(ctx)
    try:
        params = parse_callback_params(raw_params)
        if not params.get("state"):
            raise SignInFailure(E.STATE_NOT_FOUND)
        data = consume_state(ctx, params["state"])
        target = data.get("errorURL") or target
        return _finish(ctx, provider_id, params, data)
    except SignInFailure as failure:
        return failure_location(ctx, target, failure)
    except Exception:  # noqa: BLE001 - a browser mid-flow gets the error page, never a 500
        logger.exception("social callback for %s failed", provider_id)
        return failure_location(ctx, target, SignInFailure(E.INTERNAL_SERVER_ERROR))


def _finish(ctx, provider_id, params, data):
    if params.get("error"):
        raise SignInFailure(params["error"], params.get("error_description"))
    if not params.get("code"):
        raise SignInFailure(E.NO_CODE)
    provider = get_provider(provider_id)
    if provider is None:
        raise SignInFailure(E.PROVIDER_NOT_FOUND)
    if data.get("providerId", provider_id) != provider_id:
        raise SignInFailure(E.STATE_MISMATCH)  # a state issued for another provider
    _check_issuer(provider, params.get("iss"))
    nonce = data.get("idTokenNonce")
    if provider.requires_nonce and not nonce:
        raise SignInFailure(E.NONCE_BINDING_MISSING)
    try:
        oauth_tokens = provider.exchange_code(ctx, params["code"], data["codeVerifier"], params.get("device_id"))
    except ProviderError as exc:
        logger.warning("code exchange with %s failed: %s", provider.id, exc)
        raise SignInFailure(E.INVALID_CODE) from None
    try:
        profile = provider.fetch_profile(oauth_tokens, nonce=nonce, user_data=params.get("user"))
    except ProviderError as exc:
        logger.warning("no user info from %s: %s", provider.id, exc)
        raise SignInFailure(E.UNABLE_TO_GET_USER_INFO) from None
    callback_url = data.get("callbackURL")
    if not callback_url:
        raise SignInFailure(E.NO_CALLBACK_URL)
    if isinstance(data.get("link"), dict):
        link_from_callback(provider, profile, oauth_tokens, data["link"])
        return callback_url
    if not profile.email:
        raise SignInFailure(E.EMAIL_NOT_FOUND)
    disable_sign_up = (provider.disable_implicit_sign_up and data.get("requestSignUp") is not True) \
        or provider.disable_sign_up
    try:
        signed_in = sign_in_with_profile(ctx, provider, profile, oauth_tokens, disable_sign_up)
    except SignInRefused as refused:
        raise SignInFailure(refused.code) from None  # social redirects write "account_not_linked"
    except APIError as error:  # a coded refusal of a hook run in the sign-in (social_sign_in_committing)
        raise SignInFailure.from_api_error(error) from None
    if signed_in.two_factor is not None:
        # better-auth's twoFactorClient shows its 2FA page on this parameter; its verify calls finish.
        return links.set_param(callback_url, "twoFactorRedirect", "true")
    return (data.get("newUserURL") or callback_url) if signed_in.is_new_user else callback_url


def _check_issuer(provider, iss):
    """RFC 9207: an ``iss`` parameter that names another issuer is a mix-up attack."""
    if iss is None:
        return
    try:
        expected = provider.get_endpoint("issuer") if provider.issuer else None
    except ProviderError:
        raise SignInFailure(E.PROVIDER_NOT_FOUND) from None
    if expected and iss != expected:
        raise SignInFailure(E.ISSUER_MISMATCH)


# --- users and accounts (core.md §5.4): the one external-identity flow ---------------------------
class SocialAuthority(external_identity.Authority):
    """A social provider configured by the deployment: trusted for every e-mail domain (I1 (b))."""

    def __init__(self, provider, disable_sign_up=False):
        linking = app_settings.account_linking
        self.provider_id = provider.id
        self.vouches_for_email = provider.id in (linking.trusted_providers or [])
        self.require_local_email_verified = linking.require_local_email_verified
        self.require_email_verified = bool(provider.config.get("requireEmailVerification"))
        self.allow_sign_up = not disable_sign_up

    def grant(self, user, identity, is_new_user):
        # The plugins' hook into the sign-in's transaction (core.md knows no organizations; the sso
        # plugin adds a membership by e-mail domain here, sso.md §8). Only the user and the provider id
        # go out: the social provider's raw claims vouch for nothing an organization could grant on.
        signals.social_sign_in_committing.send(sender=Account, user=user, provider=self.provider_id,
                                               is_new_user=is_new_user)


def identity_of(profile, oauth_tokens):
    return external_identity.Identity(
        account_id=profile.account_id, email=profile.email, email_verified=bool(profile.email_verified),
        name=profile.name or "", image=profile.image, tokens=oauth_tokens, user_info=profile.raw)


def sign_in_with_profile(ctx, provider, profile, oauth_tokens, disable_sign_up=False):
    """Find, link or create the user for ``profile``, then open a session (or, for a user with 2FA,
    a pending two-factor sign-in: ``signed_in.two_factor``, no session).

    Returns the ``SignedIn``; raises :class:`SignInRefused` and writes nothing then.
    """
    signed_in = external_identity.sign_in(ctx, SocialAuthority(provider, disable_sign_up),
                                          identity_of(profile, oauth_tokens))
    if signed_in.session is not None:  # a pending sign-in is announced by its verification
        signals.social_sign_in.send(sender=Account, user=signed_in.user, provider=provider.id,
                                    account=signed_in.account, session=signed_in.session,
                                    is_new_user=signed_in.is_new_user)
    return signed_in


# --- linking to the signed-in user (core.md §4.19, §5.3 step 12) ---------------------------------
def _merge_scopes(stored, incoming):
    merged = [s for s in (stored or "").split(",") if s]
    return ",".join(merged + [s for s in incoming if s and s not in merged])


def link_from_callback(provider, profile, oauth_tokens, link):
    linking = app_settings.account_linking
    authority, identity = SocialAuthority(provider), identity_of(profile, oauth_tokens)
    if not external_identity.may_attach(authority, identity):
        raise SignInFailure(E.UNABLE_TO_LINK_ACCOUNT)
    if (profile.email or "") != str(link.get("email", "")).lower() and not linking.allow_different_emails:
        raise SignInFailure(E.EMAIL_DOES_NOT_MATCH)
    existing = Account.objects.filter(provider_id=provider.id, account_id=profile.account_id).first()
    if existing is not None:
        if str(existing.user_id) != str(link.get("userId")):
            raise SignInFailure(E.ACCOUNT_ALREADY_LINKED)
        existing.scope = _merge_scopes(existing.scope, oauth_tokens.scopes)
        for key, value in external_identity.token_columns(oauth_tokens).items():
            setattr(existing, key, value)
        existing.save()
        return existing
    user = users.find_by_pk(link.get("userId"))
    if user is None:
        raise SignInFailure(E.UNABLE_TO_LINK_ACCOUNT)
    try:
        account = external_identity.create_account(authority, user, identity)
    except SignInRefused:
        raise SignInFailure(E.UNABLE_TO_LINK_ACCOUNT) from None
    signals.account_linked.send(sender=Account, user=user, provider=provider.id, account=account)
    return account


# --- ID tokens from native apps (core.md §5.1 idToken, §4.19) ------------------------------------
def _profile_from_id_token(provider, id_token):
    if not provider.supports_id_token:
        raise APIError(404, codes.ID_TOKEN_NOT_SUPPORTED)
    try:
        claims = provider.verify_id_token(id_token["token"], nonce=id_token.get("nonce"))
    except ProviderError as exc:
        logger.info("ID token for %s refused: %s", provider.id, exc)
        raise APIError(401, codes.INVALID_TOKEN) from None
    try:
        profile = provider.profile_from_claims(claims, id_token.get("user"))
    except ProviderError:
        raise APIError(401, codes.FAILED_TO_GET_USER_INFO) from None
    if not profile.email:
        raise APIError(401, codes.USER_EMAIL_NOT_FOUND)
    oauth_tokens = Tokens(access_token=id_token.get("accessToken"), refresh_token=id_token.get("refreshToken"),
                          id_token=id_token["token"])
    return profile, oauth_tokens


def sign_in_with_id_token(ctx, provider, id_token, request_sign_up=False):
    profile, oauth_tokens = _profile_from_id_token(provider, id_token)
    disable_sign_up = (provider.disable_implicit_sign_up and not request_sign_up) or provider.disable_sign_up
    try:
        signed_in = sign_in_with_profile(ctx, provider, profile, oauth_tokens, disable_sign_up)
    except SignInRefused as refused:
        if refused.reason == E.EMAIL_NOT_VERIFIED:
            raise APIError(403, codes.EMAIL_NOT_VERIFIED) from None
        raise APIError(401, codes.OAUTH_LINK_ERROR, refused.reason) from None
    if signed_in.two_factor is not None:
        return signed_in.two_factor  # /sign-in/email's answer: finish with /two-factor/verify-*
    return {"redirect": False, "token": signed_in.session.token, "user": users.to_wire(signed_in.user)}


def link_id_token(ctx, provider, id_token, user):
    profile, oauth_tokens = _profile_from_id_token(provider, id_token)
    existing = Account.objects.filter(provider_id=provider.id, account_id=profile.account_id).first()
    if existing is not None and existing.user_id == user.pk:
        external_identity.refresh_tokens(existing, oauth_tokens)
        return
    if existing is not None:
        raise APIError(409, codes.SOCIAL_ACCOUNT_ALREADY_LINKED)
    linking = app_settings.account_linking
    authority, identity = SocialAuthority(provider), identity_of(profile, oauth_tokens)
    if not external_identity.may_attach(authority, identity):
        raise APIError(401, codes.LINKING_NOT_ALLOWED)
    if profile.email != users.email_of(user).lower() and not linking.allow_different_emails:
        raise APIError(401, codes.LINKING_DIFFERENT_EMAILS_NOT_ALLOWED)
    try:
        account = external_identity.create_account(authority, user, identity)
    except SignInRefused:
        raise APIError(417, codes.LINKING_FAILED) from None
    signals.account_linked.send(sender=Account, user=user, provider=provider.id, account=account)
