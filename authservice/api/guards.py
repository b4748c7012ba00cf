"""Endpoint guards: the Origin check, login CSRF, and the session guards (core.md §1.8, §3.4)."""

from authservice import app_settings, origins
from authservice.errors import APIError, codes
from authservice.flows import sessions


def check_origin(ctx):
    """Router-wide CSRF defence: cookie-carrying writes must come from a trusted origin."""
    if app_settings.disable_origin_check or not ctx.headers.get("cookie"):
        return
    _require_trusted_origin(ctx)


def _require_trusted_origin(ctx):
    origin = origins.request_origin(ctx.headers)
    if origin is None:
        origins.log_refused(None)
        raise APIError(403, codes.MISSING_OR_NULL_ORIGIN)
    try:
        trusted = origins.is_trusted_origin(origin)
    except origins.MalformedURL:
        # A header, not a field the client filled in: an origin that does not parse is simply not
        # a trusted one (better-auth's answer), still a coded 4xx and never a 500 (I4).
        trusted = False
    if not trusted:
        origins.log_refused(origin)
        raise APIError(403, codes.INVALID_ORIGIN)


def check_login_csrf(ctx):
    """Sign-in/sign-up from a browser must not be forced by another site (login CSRF)."""
    if app_settings.disable_origin_check or ctx.request is None:
        return
    headers = ctx.headers
    if headers.get("cookie"):
        _require_trusted_origin(ctx)
        return
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None or "sec-fetch-mode" in headers or "sec-fetch-dest" in headers:
        if fetch_site == "cross-site" and headers.get("sec-fetch-mode") == "navigate":
            raise APIError(403, codes.CROSS_SITE_NAVIGATION_LOGIN_BLOCKED)
        _require_trusted_origin(ctx)
        return
    if headers.get("origin") is not None or headers.get("referer") is not None:
        _require_trusted_origin(ctx)


def _require_session(ctx, from_storage):
    found = sessions.get_session(ctx, bypass_cache=from_storage)
    if found is None:
        raise APIError(401, codes.UNAUTHORIZED)
    return found


def _require_fresh(ctx):
    found = _require_session(ctx, from_storage=False)
    sessions.require_fresh(found)
    return found


GUARDS = {
    "session": lambda ctx: _require_session(ctx, from_storage=False),
    "sensitive": lambda ctx: _require_session(ctx, from_storage=True),
    "fresh": _require_fresh,
}


def run(ctx):
    endpoint = ctx.endpoint
    if endpoint.guard:
        GUARDS[endpoint.guard](ctx)
    if endpoint.login_csrf:
        check_login_csrf(ctx)
