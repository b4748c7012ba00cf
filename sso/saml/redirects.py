"""Where the ACS sends the browser (sso.md §9 "SAML", §10 rule 8).

Every candidate is re-checked here against the "safe" rules, whatever was checked at sign-in, and
the ACS path itself is never a target. RelayState is a state key, never a URL.
"""

import posixpath
from urllib.parse import unquote, urljoin, urlsplit

from authservice import app_settings, links, origins
from sso import app_settings as sso_settings
from sso.saml.config import ACS_ALIAS_PATH, ACS_PATH


def _is_acs(ctx, url):
    absolute = urljoin(links.public_origin(ctx) + "/", url)
    path = posixpath.normpath(unquote(urlsplit(absolute).path) or "/")
    base = app_settings.base_path.rstrip("/")
    return any(path.startswith(base + prefix) or path + "/" == base + prefix
               for prefix in (ACS_PATH, ACS_ALIAS_PATH))


def is_safe(ctx, url):
    if not isinstance(url, str) or not url:
        return False
    if not (origins.is_safe_relative(url) or origins.is_trusted_origin(url)):
        return False
    return not _is_acs(ctx, url)


def success_url(ctx, provider=None, pending=None):
    """RelayState callbackURL, provider/global idpInitiatedCallbackUrl, provider callbackUrl, app origin."""
    config = (provider.saml_config or {}) if provider is not None else {}
    candidates = (pending.callback_url if pending is not None else None, config.get("idpInitiatedCallbackUrl"),
                  sso_settings.saml.idp_initiated_callback_url, config.get("callbackUrl"))
    for candidate in candidates:
        if is_safe(ctx, candidate):
            return candidate
    return links.public_origin(ctx)


def error_url(ctx, provider=None, pending=None):
    """RelayState errorURL (default ``{base}/error`` once a RelayState was read), else the success URL."""
    if pending is not None:
        for candidate in (pending.error_url, f"{links.base(ctx)}/error"):
            if is_safe(ctx, candidate):
                return candidate
    return success_url(ctx, provider, pending)


def idp_initiated_get(ctx, relay_state, signed_in):
    """``GET`` on the ACS (sso.md §5): the safe RelayState with a session, else the error page."""
    if signed_in:
        return relay_state if is_safe(ctx, relay_state) else links.public_origin(ctx)
    target = app_settings.error_url or f"{links.public_origin(ctx)}/error"
    return links.with_error(target, "invalid_request")
