"""The session cookie cache: better-auth's ``session.cookieCache``, ``compact`` strategy (issue 18 §2).

``session_data`` holds the session and user as get-session answers them, signed, so get-session
can answer from the cookie for ``max_age`` seconds without reading the database. The encoding is
better-auth 1.7's byte for byte (``dist/cookies/index.mjs`` setCookieCache / decodeCookieCache),
so its own server-side helpers (``getCookieCache``) read ours and ours reads theirs::

    base64url_nopad(JSON {"session": data, "expiresAt": ms, "signature": sig})
    data = {"session": {...}, "user": {...}, "updatedAt": ms, "version": "1"}
    sig  = base64url_nopad(HMAC-SHA256(secret, JSON.stringify({...data, "expiresAt": ms})))

The signature covers the JSON *re-serialised from the parsed cookie*, as better-auth verifies it:
``_js_json`` is JSON.stringify for the values a cache holds (strings, integers, booleans, null).
Anything it would write differently (a float such as ``1.0``, a lone surrogate) fails the check,
which is a fall-back to the database, never a session.

Who reads it: only the get-session endpoint (:func:`served`). Every guard, every other endpoint,
``request.user`` and DRF read the database, so a cached session authorises nothing but the answer
to "who am I". That answer does not depend on the decisions the database read makes besides
"is there a live session": get-session is declared ``during_enrolment``, so a session still to
enrol a second factor (two_factor.required_for) is answered the same from either source. What the
cache cannot see is a change made elsewhere: a session revoked, or a user deactivated, on another
device stays visible to get-session on this one until the cache expires (better-auth's trade-off,
docs/sessions.md).
"""

import base64
import binascii
import hmac
import json
import re
import time
from datetime import datetime

from authservice import app_settings, bearer, cookies, tokens, wire

# better-auth's session-store.mjs: a cookie's serialized size stays under Safari's ~4093 bytes, and
# a value needing more than 100 chunks is not cached at all.
MAX_COOKIE_SIZE = 4050
MAX_CHUNKS = 100
# With "don't remember me" the cookie lives for the browser session and the signed expiry is one
# minute: better-auth's ``getDate(maxAge || 60)``.
DONT_REMEMBER_EXPIRES_IN = 60


def enabled():
    return bool(app_settings.session.cookie_cache.enabled)


# --- encoding -------------------------------------------------------------------------------------
# Built once (json.dumps with options builds one per call): the same bytes, for less.
_JS_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _js_json(value):
    """JSON.stringify of ``value`` (no spaces, non-ASCII as is, keys in insertion order)."""
    return _JS_JSON.encode(value)


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


# Only the base64url alphabet: no padding, no whitespace (which b64decode would skip), nothing else.
_B64URL = re.compile(r"[A-Za-z0-9_-]+")


def _b64url_decode(text):
    if not isinstance(text, str) or not _B64URL.fullmatch(text):
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def _signature(data, expires_at, secret):
    signed = _js_json({**data, "expiresAt": expires_at})
    digest = hmac.digest(secret.encode(), signed.encode("utf-8"), "sha256")  # OpenSSL's one-shot HMAC
    return _b64url(digest)


def encode(session, user, *, expires_at, updated_at, version, secret):
    """The cookie value for the wire ``session`` and ``user``, valid until ``expires_at`` (ms)."""
    data = {"session": session, "user": user, "updatedAt": updated_at, "version": version}
    outer = {"session": data, "expiresAt": expires_at,
             "signature": _signature(data, expires_at, secret)}
    return _b64url(_js_json(outer).encode("utf-8"))


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def decode(value, secret):
    """``(data, expires_at)`` from a cookie value whose signature verifies, else ``None``.

    Only the shape and the signature are checked here; :func:`served` checks token, version and
    expiry. Never raises on any input.
    """
    raw = _b64url_decode(value)
    if raw is None:
        return None
    try:
        outer = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(outer, dict):
        return None
    data, expires_at, signature = outer.get("session"), outer.get("expiresAt"), outer.get("signature")
    if not isinstance(data, dict) or not _is_number(expires_at) or not isinstance(signature, str):
        return None
    try:
        expected = _signature(data, expires_at, secret)
    except (ValueError, UnicodeEncodeError, RecursionError):
        return None
    if not tokens.constant_time_equals(expected, signature):
        return None
    session, user = data.get("session"), data.get("user")
    if not isinstance(session, dict) or not isinstance(user, dict):
        return None
    if not isinstance(session.get("token"), str) or not _is_number(data.get("updatedAt")):
        return None
    if not isinstance(data.get("version", "1"), str):
        return None
    return data, expires_at


# --- the cookies ----------------------------------------------------------------------------------
def _name():
    return cookies.cookie_name(cookies.SESSION_DATA)


def _chunk_index(name, base):
    suffix = name[len(base) + 1:] if name.startswith(base + ".") else None
    if not suffix or not suffix.isdigit() or not suffix.isascii() or str(int(suffix)) != suffix:
        return None
    return int(suffix)


def _present(ctx):
    """Names of the cache cookies the request carries: the whole one and any chunks we could have set.

    A chunk index past :data:`MAX_CHUNKS` was never ours, so it gets no expiring ``Set-Cookie``: a
    header of thousands of made-up chunk names would otherwise be answered with as many lines, 2.6
    times the request's size (attack pass 18b), enough to trip a proxy's limit on response headers."""
    base = _name()
    present = []
    for name in ctx.cookies:
        index = _chunk_index(name, base)
        if name == base or (index is not None and index < MAX_CHUNKS):
            present.append(name)
    return present


def read(ctx):
    """The request's cache value: the whole cookie, else its chunks ``.0``..``.n-1`` joined.

    Chunks are joined in index order, whatever order the header lists them in; a gap or a
    duplicate is no value at all (a forged or half-written set, never a partial session).
    """
    base = _name()
    whole = ctx.cookies.get(base)
    if whole:
        return whole
    chunks = {}
    for name, value in ctx.cookies.items():
        index = _chunk_index(name, base)
        if index is not None:
            chunks[index] = value
    if not chunks or len(chunks) > MAX_CHUNKS or sorted(chunks) != list(range(len(chunks))):
        return None
    return "".join(chunks[index] for index in range(len(chunks)))


def _write(ctx, name, value, attributes):
    ctx.response_cookies[name] = (value, attributes)


def clear(ctx):
    """Expire the cache cookie and every chunk of it the request carried."""
    attributes = cookies.attributes(0, cookies.SESSION_DATA)
    for name in {_name(), *_present(ctx)}:
        _write(ctx, name, "", attributes)


def clear_carried(ctx):
    """:func:`clear`, when the request carries a cache cookie (else the answer sets none, as
    better-auth's revoke endpoints, which never touch cookies)."""
    if _present(ctx):
        clear(ctx)


def _answer_names(ctx):
    base = _name()
    return [n for n in ctx.response_cookies if n == base or _chunk_index(n, base) is not None]


def being_set(ctx):
    """Whether ``ctx``'s answer already sets a cache value (not just expires one)."""
    return any(ctx.response_cookies[name][0] for name in _answer_names(ctx))


def forget(ctx):
    """Drop the cache cookies this answer was about to set (a sign-in that failed after all)."""
    for name in _answer_names(ctx):
        ctx.response_cookies.pop(name, None)


def _chunk_size(name, attributes):
    empty = cookies.format_set_cookie(name, "", **attributes)
    return MAX_COOKIE_SIZE - len(empty)


def store(ctx, session, user, *, dont_remember):
    """Set the cache for ``session`` of ``user`` (model instances) on ``ctx``'s answer.

    A session still to enrol a second factor (``two_factor.required_for``) is never cached: get-session
    flags it (``twoFactorEnrollmentRequired``), and a cached answer would not.
    """
    from authservice.two_factor import policy  # noqa: PLC0415 - two_factor imports the flows that import us

    if policy.enrolment_pending(session, user):
        clear(ctx)
        return
    settings = app_settings.session.cookie_cache
    max_age = None if dont_remember else settings.max_age
    now_ms = int(time.time() * 1000)
    value = encode(wire.session(session), wire.user(user), updated_at=now_ms, version=settings.version,
                   expires_at=now_ms + (max_age or DONT_REMEMBER_EXPIRES_IN) * 1000,
                   secret=app_settings.secret())
    attributes = cookies.attributes(max_age, cookies.SESSION_DATA)
    stale = cookies.attributes(0, cookies.SESSION_DATA)
    base = _name()
    # Chunks of an earlier, longer value would be joined with the new ones: expire them all first.
    for name in _present(ctx):
        _write(ctx, name, "", stale)
    size = _chunk_size(f"{base}.{MAX_CHUNKS - 1}", attributes)
    if len(value) <= size:
        _write(ctx, base, value, attributes)
        return
    count = -(-len(value) // size)
    if count > MAX_CHUNKS:
        return  # too big for cookies: not cached, as better-auth (every read goes to the database)
    for index in range(count):
        _write(ctx, f"{base}.{index}", value[index * size:(index + 1) * size], attributes)


# --- get-session ----------------------------------------------------------------------------------
def _millis(iso_value):
    if not isinstance(iso_value, str):
        return None
    try:
        parsed = datetime.fromisoformat(iso_value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.timestamp() * 1000


def served(ctx):
    """get-session's answer from the cache, or ``None`` to read the database.

    Served only when the cache is on, the request names its session by the signed
    ``session_token`` cookie (not a bearer token), and the cache verifies: signature, that cookie's
    token, the configured version, its own expiry and the session's. A cache cookie that fails is
    expired on this answer; the database read that follows sets a fresh one.
    """
    if not enabled():
        if _present(ctx):
            clear(ctx)  # left from when the cache was on: better-auth removes it too
        return None
    if bearer.token_from(ctx.headers) is not None:
        return None
    token = ctx.signed_cookie(cookies.SESSION_TOKEN)
    value = read(ctx) if token is not None else None
    if value is None:
        return None
    decoded = decode(value, app_settings.secret())
    if decoded is None or not _valid(decoded, token):
        clear(ctx)
        return None
    data = decoded[0]
    ctx._session_cached = True
    return {"session": data["session"], "user": data["user"]}


def _valid(decoded, token):
    data, expires_at = decoded
    if not tokens.constant_time_equals(data["session"]["token"], token):
        return False
    if data.get("version", "1") != app_settings.session.cookie_cache.version:
        return False
    now_ms = time.time() * 1000
    session_expires = _millis(data["session"].get("expiresAt"))
    return expires_at >= now_ms and session_expires is not None and session_expires >= now_ms
