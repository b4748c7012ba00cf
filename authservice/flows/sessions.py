"""Sessions: create, resolve (with refresh), end; and the session cookies (core.md §2.4, §3)."""

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from authservice import app_settings, bearer, cookie_cache, django_auth_signals, signals, tokens
from authservice.cookies import DONT_REMEMBER, SESSION_TOKEN, signed_value
from authservice.errors import APIError, codes
from authservice.models import Session
from authservice.two_factor import policy

DONT_REMEMBER_EXPIRES_IN = 86400  # a "don't remember" session lives one day (core.md §2.4)


@dataclass
class SessionInfo:
    session: Session
    user: object
    # two_factor.required_for applies and no second factor is enabled: the session may only enrol
    # one (two_factor/policy.py). Endpoints refuse it; request.user and DRF see nobody.
    enrolment_pending: bool = False


def _dont_remember(ctx):
    return ctx.signed_cookie(DONT_REMEMBER) == "true"


def create_session(ctx, user, remember=True, announce=True, *, method, authenticated_at=None):
    """A new session row for ``user``, with its cookies set on ``ctx``.

    ``method`` is how the user proved who they were ("password", "social", "sso", "passkey",
    "two_factor", "verification_link", "sign_up"...): no default, so every caller must say. The MFA
    policy reads it (SSO sessions are exempt from ``two_factor.required_for``).

    ``created_at`` is when the user proved it: now, or ``authenticated_at`` for a session that only
    replaces one (:func:`replace_session`). The "fresh" guard measures from it.

    ``announce=False`` leaves :func:`announce_sign_in` to the caller: one creating the session inside
    a transaction calls it after the block, so a receiver that raises cannot roll the rows back.
    """
    if not getattr(user, "is_active", True):
        # The one place sessions are made: whatever flow got here, an inactive user gets none (I1).
        # Flows refuse earlier with their own answer; this is the backstop for one that forgot.
        raise APIError(401, codes.FAILED_TO_CREATE_SESSION)
    now = timezone.now()
    expires_in = app_settings.session.expires_in if remember else DONT_REMEMBER_EXPIRES_IN
    session = Session.objects.create(
        token=tokens.session_token(),
        user=user,
        expires_at=now + timedelta(seconds=expires_in),
        ip_address=ctx.client_ip,
        user_agent=ctx.user_agent,
        created_at=authenticated_at or now,
        updated_at=now,
        sign_in_method=method,
    )
    set_session_cookie(ctx, session, dont_remember=not remember)
    ctx._session, ctx._session_loaded = _info(session, user), True
    if announce:
        announce_sign_in(ctx, user, session)
    return session


def replace_session(ctx, found, remember):
    """A new session continuing ``found`` (whose row is gone): how *and when* its user signed in.

    No proof was given anew, so the new session is no fresher than the old one: replacing a stolen,
    stale session (change-password with ``revokeOtherSessions``) must not make it pass the "fresh"
    guard. Keeping the method keeps an SSO session exempt from ``two_factor.required_for``.
    """
    old = found.session
    return create_session(ctx, found.user, remember, method=old.sign_in_method, authenticated_at=old.created_at)


def is_fresh(session):
    """Whether ``session`` was authenticated within ``session.fresh_age`` (0 turns the check off)."""
    fresh_age = app_settings.session.fresh_age
    return not fresh_age or (timezone.now() - session.created_at).total_seconds() < fresh_age


def require_fresh(found):
    if not is_fresh(found.session):
        raise APIError(403, codes.SESSION_NOT_FRESH)


def announce_sign_in(ctx, user, session):
    """The one place a sign-in is announced: our ``user_signed_in`` and Django's ``user_logged_in``."""
    signals.user_signed_in.send(sender=Session, user=user, session=session)
    django_auth_signals.logged_in(ctx, user)


def set_session_cookie(ctx, session, dont_remember=None):
    """Write ``session_token`` (and ``dont_remember``); ``None`` keeps the browser's current choice.

    With the cookie cache on, ``session_data`` too, as better-auth's setSessionCookie: every answer
    that (re)sends the session cookie (sign-in, sign-up, refresh, update-user...) refreshes the cache.
    """
    if dont_remember is None:
        dont_remember = _dont_remember(ctx)
    max_age = None if dont_remember else app_settings.session.expires_in
    ctx.set_cookie(SESSION_TOKEN, signed_value(session.token), max_age=max_age)
    if dont_remember:
        ctx.set_cookie(DONT_REMEMBER, signed_value("true"))
    if cookie_cache.enabled():
        cookie_cache.store(ctx, session, session.user, dont_remember=dont_remember)


def set_cache_cookie(ctx, found):
    """get-session's database answer re-issues the cache (unless this answer already set it)."""
    if cookie_cache.enabled() and not cookie_cache.being_set(ctx):
        cookie_cache.store(ctx, found.session, found.user, dont_remember=_dont_remember(ctx))


def clear_session_cookies(ctx):
    for key in (SESSION_TOKEN, DONT_REMEMBER):
        ctx.delete_cookie(key)
    cookie_cache.clear(ctx)


def cookie_token(ctx):
    """The session token from a validly signed cookie, or ``None``."""
    return ctx.signed_cookie(SESSION_TOKEN)


def request_token(ctx):
    """The token naming the caller's session: a valid bearer token (when enabled) or the cookie's.

    A bearer token wins over the cookie, as in better-auth (its cookie is appended after the
    browser's). The Origin check does not look here: it applies whenever cookies are sent.
    """
    token = bearer.token_from(ctx.headers)
    return token if token is not None else cookie_token(ctx)


def get_session(ctx, bypass_cache=False, disable_refresh=False):
    """The caller's live session (refreshed when due), or ``None`` (core.md §3.2), for an endpoint.

    A session deleted while it was being refreshed (a concurrent sign-out) is 401
    ``FAILED_TO_GET_SESSION`` here, as better-auth answers; :func:`resolve_session` is the same lookup
    for callers outside the endpoints, which see it as no session.
    """
    found = resolve_session(ctx, bypass_cache=bypass_cache, disable_refresh=disable_refresh)
    if found is None and ctx._session_vanished:
        raise APIError(401, codes.FAILED_TO_GET_SESSION)
    if found is not None and found.enrolment_pending and not _allowed_during_enrolment(ctx):
        # Every endpoint reads the caller's session here, guarded or not: one place refuses them all.
        raise APIError(403, codes.TWO_FACTOR_ENROLLMENT_REQUIRED)
    return found


def _allowed_during_enrolment(ctx):
    endpoint = getattr(ctx, "endpoint", None)
    return bool(endpoint is not None and endpoint.during_enrolment)


def _info(session, user):
    return SessionInfo(session, user, enrolment_pending=policy.enrolment_pending(session, user))


def resolve_session(ctx, bypass_cache=False, disable_refresh=False):
    """The caller's live session (refreshed when due), or ``None``; never raises.

    Always the database (the cookie cache is read by get-session alone, authservice/cookie_cache.py):
    one query, the session joined with its user, by the unique token index. A row gone by the time
    it is refreshed is no session: the cookies are cleared and ``ctx._session_vanished`` is set.
    """
    if ctx._session_loaded:
        return ctx._session
    ctx._session_loaded = True
    token = request_token(ctx)
    if token is None:
        return None
    session = Session.objects.with_user(token)
    now = timezone.now()
    # A deactivated user is signed out everywhere, as Django's own session auth does.
    if session is None or session.expires_at < now or not getattr(session.user, "is_active", True):
        if session is not None:
            session.delete()
        clear_session_cookies(ctx)
        return None
    if not (disable_refresh or _dont_remember(ctx)) and not _refresh_if_due(ctx, session, now):
        ctx._session_vanished = True
        clear_session_cookies(ctx)
        return None
    ctx._session = _info(session, session.user)
    return ctx._session


def _refresh_if_due(ctx, session, now):
    """Refresh ``session`` when due; ``False`` when its row is gone (deleted meanwhile)."""
    expires_in = app_settings.session.expires_in
    update_age = app_settings.session.update_age
    if session.expires_at - timedelta(seconds=expires_in) + timedelta(seconds=update_age) > now:
        return True
    session.expires_at = now + timedelta(seconds=expires_in)
    session.updated_at = now
    updated = Session.objects.filter(pk=session.pk).update(
        expires_at=session.expires_at, updated_at=now
    )
    if not updated:
        return False
    set_session_cookie(ctx, session)
    return True


def end_session(ctx):
    """Sign-out: delete the caller's session (if any) and clear the cookies."""
    token = request_token(ctx)
    if token is not None:
        session = Session.objects.with_user(token)
        if session is not None:
            session.delete()
            signals.user_signed_out.send(sender=Session, user=session.user, session=session)
            django_auth_signals.logged_out(ctx, session.user)
    clear_session_cookies(ctx)


# better-auth 1.7 reads a user's sessions through its adapter's findMany, which stops at
# ``advanced.database.defaultFindManyLimit`` (100) rows: a user who signs in from a script every few
# minutes and never signs out gets a list of bounded size and cost. So does ours (bench/scaling.py).
LIST_LIMIT = 100


def live_sessions(user, limit=LIST_LIMIT):
    """The user's ``limit`` newest live sessions (the current one among them), oldest first."""
    newest = (Session.objects.filter(user=user, expires_at__gt=timezone.now())
              .order_by("-created_at", "-id")[:limit])
    return sorted(newest, key=lambda session: (session.created_at, session.id))


def revoke(user, *, token=None, keep_token=None):
    """Delete one of ``user``'s sessions (by token), or all of them except ``keep_token``."""
    query = Session.objects.filter(user=user)
    if token is not None:
        query = query.filter(token=token)
    if keep_token is not None:
        query = query.exclude(token=keep_token)
    revoked = list(query)
    query.delete()
    for session in revoked:
        signals.session_revoked.send(sender=Session, user=user, session=session)
    return len(revoked)
