"""Cookie names, values and attributes, exactly as better-auth writes them (core.md §2)."""

import functools
from urllib.parse import quote, unquote

from authservice import app_settings, tokens

SESSION_TOKEN = "session_token"
SESSION_DATA = "session_data"
DONT_REMEMBER = "dont_remember"
STATE = "state"


def encode_component(value):
    """JavaScript's encodeURIComponent."""
    return quote(value, safe="-_.!~*'()")


def is_secure():
    forced = app_settings.secure_cookies
    if forced is not None:
        return bool(forced)
    return bool(app_settings.base_url) and app_settings.base_url.startswith("https://")


def cookie_name(key):
    return _cookie_name(app_settings.namespace.section(), key)


@functools.lru_cache(maxsize=64)
def _cookie_name(section, key):
    # Per settings section (a change of settings makes a new one): read two or three times per request.
    name = section.cookie_names.get(key) or f"{section.cookie_prefix}.{key}"
    return ("__Secure-" if is_secure() else "") + name


def signed_value(value):
    return encode_component(tokens.sign(value))


def read_signed(cookies, key):
    """The verified value of a signed cookie, or ``None`` (bad or missing cookies are ignored)."""
    raw = cookies.get(cookie_name(key))
    if not raw:
        return None
    if "%" in raw:
        raw = unquote(raw)
    return tokens.unsign(raw)


# Cookies that must come back on a provider's top-level redirect to our callback, a navigation from
# another site: ``SameSite=Strict`` would keep them home and fail every social and OIDC sign-in, so
# "strict" gives them ``Lax``. (The SAML relay_state cookie sets its own value: sso.saml.sign_in.bind.)
_BACK_FROM_ANOTHER_SITE = {STATE}


def same_site(key=None):
    """``Lax``, ``Strict`` or ``None``: the ``cookie_attributes.same_site`` setting for cookie ``key``."""
    configured = app_settings.cookie_attributes.same_site
    if configured == "strict" and key in _BACK_FROM_ANOTHER_SITE:
        configured = "lax"
    return configured.capitalize()


def attributes(max_age=None, key=None):
    attrs = {"max_age": max_age, "path": "/", "httponly": True, "samesite": same_site(key),
             "secure": is_secure()}
    if app_settings.cookie_domain:
        attrs["domain"] = app_settings.cookie_domain
    return attrs


def format_set_cookie(name, value, max_age=None, path="/", httponly=True, samesite="Lax", secure=False,
                      domain=None):
    """One ``Set-Cookie`` header value, for in-process callers that read headers."""
    parts = [f"{name}={value}"]
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    if domain:
        parts.append(f"Domain={domain}")
    parts.append(f"Path={path}")
    if httponly:
        parts.append("HttpOnly")
    if secure:
        parts.append("Secure")
    if samesite:
        parts.append(f"SameSite={samesite}")
    return "; ".join(parts)


def parse_cookie_header(header):
    """``Cookie`` header -> dict (the last value of a repeated name wins, as browsers send it first)."""
    from django.http.cookie import parse_cookie

    return parse_cookie(header or "")
