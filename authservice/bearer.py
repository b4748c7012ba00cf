"""Bearer tokens: better-auth's ``bearer`` plugin, off unless ``AUTHSERVICE["bearer"]["enabled"]``.

In: ``Authorization: Bearer <token>`` names the session as the session cookie would. The token is
the cookie's signed value (what ``set-auth-token`` carries, URL-encoded or not) or, unless
``require_signature``, the raw session token of a sign-in's body. A token that does not verify is
ignored, as better-auth ignores it: the request is then as if it carried no bearer.

Out: an answer that sets the session cookie also carries ``set-auth-token: <the cookie's value>``,
exposed to cross-origin scripts by ``Access-Control-Expose-Headers``.
"""

import re
from typing import Any
from urllib.parse import unquote

from authservice import app_settings, cookies, tokens

HEADER = "set-auth-token"
_SCHEME = "bearer "  # RFC 7235: the scheme is case-insensitive
# Raw tokens are what tokens.session_token() makes; anything else can name no session, and is not
# sent to the database at all (a NUL byte there is an error, not a miss).
_RAW_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def enabled() -> bool:
    return bool(app_settings.bearer.enabled)


def token_from(headers: Any) -> str | None:
    """The session token an ``Authorization: Bearer`` header names, or ``None`` (also when disabled)."""
    if not enabled():
        return None
    value = headers.get("authorization")
    if not value or value[: len(_SCHEME)].lower() != _SCHEME:
        return None
    token = value[len(_SCHEME):].strip()
    if "." in token:
        return tokens.unsign(unquote(token) if "%" in token else token)
    if app_settings.bearer.require_signature or not _RAW_TOKEN.fullmatch(token):
        return None
    return token


def exposed_token(ctx: Any) -> str | None:
    """The ``set-auth-token`` value for ``ctx``'s answer: the session cookie it sets, if any."""
    if ctx is None or not enabled():
        return None
    written = ctx.response_cookies.get(cookies.cookie_name(cookies.SESSION_TOKEN))
    if written is None:
        return None
    value, attributes = written
    # A cleared cookie (sign-out, a dead session) hands out no token, as better-auth's after-hook.
    if not value or attributes.get("max_age") == 0:
        return None
    return value


def add_exposed_header(existing: str | None) -> str:
    """``Access-Control-Expose-Headers`` with ``set-auth-token`` added to what it already lists."""
    names = [name.strip() for name in (existing or "").split(",") if name.strip()]
    if HEADER not in (name.lower() for name in names):
        names.append(HEADER)
    return ", ".join(names)
