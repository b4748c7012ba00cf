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

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from authservice import app_settings, links, signals, tokens, wire
from authservice.cookies import STATE, signed_value
from authservice.errors import APIError, OAuthCallbackError as E, codes
from authservice.flows import sessions
from authservice.models import Account, Verification
from authservice.social.base import ProviderError, Tokens
from authservice.social.registry import get_provider

logger = logging.getLogger("authservice.social")

STATE_EXPIRES_IN = 600  # seconds the verification row lives (core.md §5.2)
STATE_COOKIE_MAX_AGE = 300
CALLBACK_PARAMS = ("code", "state", "error", "error_description", "iss", "user", "device_id")


class CallbackFailure(Exception):
    """A callback step failed: redirect to ``target`` (default: the state's error URL) with ``code``."""

    def __init__(self, code, description=None, target=None):
        super().__init__(code)
        self.code = code
        self.description = description
        self.target = target


class SignInRefused(Exception):
    """User/account resolution refused; ``reason`` is better-auth's phrase (``account not linked``)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def require_provider(provider_id):
    provider = get_provider(provider_id)
    if provider is None:
        raise APIError(404, codes.PROVIDER_NOT_FOUND)
    return provider


def default_error_url(ctx):
    return app_settings.error_url or f"{links.base(ctx)}/error"


# --- starting a flow ---------------------------------------------------------------------------
def start(ctx, provider, body, link=None):
    """The authorize URL for a new flow; writes the state row and the state cookie."""
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
    fixed = {
        "callbackURL": callback_url, "codeVerifier": verifier, "errorURL": body.get("errorCallbackURL"),
        "newUserURL": body.get("newUserCallbackURL"), "link": link,
        "requestSignUp": body.get("requestSignUp"), "idTokenNonce": nonce,
        "expiresAt": int(expires_at.timestamp() * 1000), "oauthState": state, "providerId": provider.id,
    }
    # additionalData rides along but can never replace the keys the callback relies on.
    value = {**(body.get("additionalData") or {}), **{k: v for k, v in fixed.items() if v is not None}}
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
            raise CallbackFailure(E.INVALID_CALLBACK_REQUEST)
        found[key] = value
    return found


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
        raise CallbackFailure(E.STATE_MISMATCH)  # nothing readable: the default target
    error_url = data.get("errorURL") if isinstance(data.get("errorURL"), str) else None
    cookie = ctx.signed_cookie(STATE)
    if data.get("oauthState", state) != state or not cookie or not tokens.constant_time_equals(cookie, state):
        raise CallbackFailure(E.STATE_MISMATCH, target=error_url)
    ctx.delete_cookie(STATE)
    claimed = row.claim()  # of two concurrent callbacks with one state, only one claims it
    expires_at = data.get("expiresAt")
    if not claimed or not isinstance(expires_at, (int, float)) or expires_at < time.time() * 1000 \
            or row.expires_at < timezone.now():
        raise CallbackFailure(E.STATE_MISMATCH, target=error_url)
    return data


def callback(ctx, provider_id, raw_params):
    """GET /callback/:provider: the URL to redirect to, success or failure (core.md §5.3)."""
    target = default_error_url(ctx)
    try:
        params = parse_callback_params(raw_params)
        if not params.get("state"):
            raise CallbackFailure(E.STATE_NOT_FOUND)
        data = consume_state(ctx, params["state"])
        target = data.get("errorURL") or target
        return _finish(ctx, provider_id, params, data)
    except CallbackFailure as failure:
        return error_redirect(failure.target or target, failure.code, failure.description)
    except Exception:  # noqa: BLE001 - a browser mid-flow gets the error page, never a 500
        logger.exception("social callback for %s failed", provider_id)
        return error_redirect(target, E.INTERNAL_SERVER_ERROR)


def error_redirect(target, code, description=None):
    params = {"error": code}
    if description:
        params["error_description"] = description
    return links.with_params(target, **params)


def _finish(ctx, provider_id, params, data):
    if params.get("error"):
        raise CallbackFailure(params["error"], params.get("error_description"))
    if not params.get("code"):
        raise CallbackFailure(E.NO_CODE)
    provider = get_provider(provider_id)
    if provider is None:
        raise CallbackFailure(E.PROVIDER_NOT_FOUND)
    if data.get("providerId", provider_id) != provider_id:
        raise CallbackFailure(E.STATE_MISMATCH)  # a state issued for another provider
    _check_issuer(provider, params.get("iss"))
    nonce = data.get("idTokenNonce")
    if provider.requires_nonce and not nonce:
        raise CallbackFailure(E.NONCE_BINDING_MISSING)
    try:
        oauth_tokens = provider.exchange_code(ctx, params["code"], data["codeVerifier"], params.get("device_id"))
    except ProviderError as exc:
        logger.warning("code exchange with %s failed: %s", provider.id, exc)
        raise CallbackFailure(E.INVALID_CODE) from None
    try:
        profile = provider.fetch_profile(oauth_tokens, nonce=nonce, user_data=params.get("user"))
    except ProviderError as exc:
        logger.warning("no user info from %s: %s", provider.id, exc)
        raise CallbackFailure(E.UNABLE_TO_GET_USER_INFO) from None
    callback_url = data.get("callbackURL")
    if not callback_url:
        raise CallbackFailure(E.NO_CALLBACK_URL)
    if isinstance(data.get("link"), dict):
        link_from_callback(provider, profile, oauth_tokens, data["link"])
        return callback_url
    if not profile.email:
        raise CallbackFailure(E.EMAIL_NOT_FOUND)
    disable_sign_up = (provider.disable_implicit_sign_up and not data.get("requestSignUp")) \
        or provider.disable_sign_up
    try:
        _user, _session, is_new = sign_in_with_profile(ctx, provider, profile, oauth_tokens, disable_sign_up)
    except SignInRefused as refused:
        raise CallbackFailure(refused.reason.replace(" ", "_")) from None
    return (data.get("newUserURL") or callback_url) if is_new else callback_url


def _check_issuer(provider, iss):
    """RFC 9207: an ``iss`` parameter that names another issuer is a mix-up attack."""
    if iss is None:
        return
    try:
        expected = provider.get_endpoint("issuer") if provider.issuer else None
    except ProviderError:
        raise CallbackFailure(E.PROVIDER_NOT_FOUND) from None
    if expected and iss != expected:
        raise CallbackFailure(E.ISSUER_MISMATCH)


# --- users and accounts (core.md §5.4) -----------------------------------------------------------
def _token_fields(oauth_tokens):
    fields = {"access_token": oauth_tokens.access_token, "refresh_token": oauth_tokens.refresh_token,
              "id_token": oauth_tokens.id_token,
              "access_token_expires_at": oauth_tokens.access_token_expires_at,
              "refresh_token_expires_at": oauth_tokens.refresh_token_expires_at}
    return {key: value for key, value in fields.items() if value is not None}


def _may_link_by_email(provider, profile, user):
    linking = app_settings.account_linking
    trusted = provider.id in (linking.trusted_providers or [])
    return ((trusted or profile.email_verified)
            and (user.email_verified or not linking.require_local_email_verified)
            and linking.enabled and not linking.as_dict().get("disable_implicit_linking"))


def _mark_verified(user, profile):
    if profile.email_verified and not user.email_verified and profile.email == user.email.lower():
        user.email_verified = True
        user.save(update_fields=["email_verified", "updated_at"])


def sign_in_with_profile(ctx, provider, profile, oauth_tokens, disable_sign_up=False):
    """Find, link or create the user for ``profile``, then open a session.

    Returns ``(user, session, is_new)``; raises :class:`SignInRefused` and writes nothing then.
    """
    User = get_user_model()
    account = Account.objects.select_related("user").filter(
        provider_id=provider.id, account_id=profile.account_id).first()
    is_new = False
    if account is not None:
        user = account.user
        # Scope is left alone on sign-in: only link-social widens it (better-auth).
        Account.objects.filter(pk=account.pk).update(updated_at=timezone.now(), **_token_fields(oauth_tokens))
        _mark_verified(user, profile)
    else:
        user = User.objects.filter(email=profile.email).first()
        if user is not None:
            if not _may_link_by_email(provider, profile, user):
                raise SignInRefused(E.ACCOUNT_NOT_LINKED)
            account = _create_account(user, provider, profile, oauth_tokens, E.LINK_FAILED)
            _mark_verified(user, profile)
            signals.account_linked.send(sender=Account, user=user, provider=provider.id, account=account)
        else:
            if disable_sign_up:
                raise SignInRefused(E.SIGNUP_DISABLED)
            user, account = _create_user(provider, profile, oauth_tokens)
            is_new = True
    if provider.config.get("requireEmailVerification") and not user.email_verified:
        raise SignInRefused(E.EMAIL_NOT_VERIFIED)
    if not user.is_active:
        raise SignInRefused(E.UNABLE_TO_CREATE_SESSION)
    session = sessions.create_session(ctx, user, remember=True)
    signals.social_sign_in.send(sender=Account, user=user, provider=provider.id, account=account,
                                session=session, is_new_user=is_new)
    return user, session, is_new


def _create_account(user, provider, profile, oauth_tokens, failure):
    try:
        with transaction.atomic():
            return Account.objects.create(
                user=user, provider_id=provider.id, account_id=profile.account_id,
                scope=",".join(oauth_tokens.scopes), **_token_fields(oauth_tokens))
    except IntegrityError:
        raise SignInRefused(failure) from None


def _create_user(provider, profile, oauth_tokens):
    """The new user and its account, in one transaction: both or neither."""
    User = get_user_model()
    try:
        with transaction.atomic():
            user = User(email=profile.email, name=profile.name or "", image=profile.image,
                        email_verified=bool(profile.email_verified), password="")
            user.save(force_insert=True)
            account = Account.objects.create(
                user=user, provider_id=provider.id, account_id=profile.account_id,
                scope=",".join(oauth_tokens.scopes), **_token_fields(oauth_tokens))
    except IntegrityError:  # the same e-mail or account created concurrently
        raise SignInRefused(E.UNABLE_TO_CREATE_USER) from None
    signals.user_created.send(sender=User, user=user, provider=provider.id)
    return user, account


# --- linking to the signed-in user (core.md §4.19, §5.3 step 12) ---------------------------------
def _merge_scopes(stored, incoming):
    merged = [s for s in (stored or "").split(",") if s]
    return ",".join(merged + [s for s in incoming if s and s not in merged])


def link_from_callback(provider, profile, oauth_tokens, link):
    linking = app_settings.account_linking
    if (provider.id not in (linking.trusted_providers or []) and not profile.email_verified) \
            or not linking.enabled:
        raise CallbackFailure(E.UNABLE_TO_LINK_ACCOUNT)
    if (profile.email or "") != str(link.get("email", "")).lower() and not linking.allow_different_emails:
        raise CallbackFailure(E.EMAIL_DOES_NOT_MATCH)
    existing = Account.objects.filter(provider_id=provider.id, account_id=profile.account_id).first()
    if existing is not None:
        if str(existing.user_id) != str(link.get("userId")):
            raise CallbackFailure(E.ACCOUNT_ALREADY_LINKED)
        existing.scope = _merge_scopes(existing.scope, oauth_tokens.scopes)
        for key, value in _token_fields(oauth_tokens).items():
            setattr(existing, key, value)
        existing.save()
        return existing
    user = get_user_model().objects.filter(pk=link.get("userId")).first()
    if user is None:
        raise CallbackFailure(E.UNABLE_TO_LINK_ACCOUNT)
    try:
        account = _create_account(user, provider, profile, oauth_tokens, E.LINK_FAILED)
    except SignInRefused:
        raise CallbackFailure(E.UNABLE_TO_LINK_ACCOUNT) from None
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
        user, session, _ = sign_in_with_profile(ctx, provider, profile, oauth_tokens, disable_sign_up)
    except SignInRefused as refused:
        if refused.reason == E.EMAIL_NOT_VERIFIED:
            raise APIError(403, codes.EMAIL_NOT_VERIFIED) from None
        raise APIError(401, codes.OAUTH_LINK_ERROR, refused.reason) from None
    return {"redirect": False, "token": session.token, "user": wire.user(user)}


def link_id_token(ctx, provider, id_token, user):
    profile, oauth_tokens = _profile_from_id_token(provider, id_token)
    existing = Account.objects.filter(provider_id=provider.id, account_id=profile.account_id).first()
    if existing is not None and existing.user_id == user.pk:
        Account.objects.filter(pk=existing.pk).update(updated_at=timezone.now(), **_token_fields(oauth_tokens))
        return
    if existing is not None:
        raise APIError(409, codes.SOCIAL_ACCOUNT_ALREADY_LINKED)
    linking = app_settings.account_linking
    if (provider.id not in (linking.trusted_providers or []) and not profile.email_verified) \
            or not linking.enabled:
        raise APIError(401, codes.LINKING_NOT_ALLOWED)
    if profile.email != user.email.lower() and not linking.allow_different_emails:
        raise APIError(401, codes.LINKING_DIFFERENT_EMAILS_NOT_ALLOWED)
    try:
        account = _create_account(user, provider, profile, oauth_tokens, E.LINK_FAILED)
    except SignInRefused:
        raise APIError(417, codes.LINKING_FAILED) from None
    signals.account_linked.send(sender=Account, user=user, provider=provider.id, account=account)
