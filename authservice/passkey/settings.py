"""The relying party of every ceremony, from settings only.

py_webauthn compares the signed ``clientDataJSON.origin`` and the authenticator's RP ID hash with what
is given here; both come from ``AUTHSERVICE["passkey"]`` and the base URL, never from the request
(better-auth takes the request's ``Origin`` header when no origin is configured, which lets any page
that can post here choose what it is checked against).
"""

from urllib.parse import urlsplit

from authservice import app_settings, origins

DEFAULT_RP_NAME = "authservice"


def options():
    return app_settings.passkey


def is_enabled():
    """Without the plugin its routes, in-process functions and OpenAPI entries do not exist, as in
    better-auth without ``passkey()`` (the registry's ``Endpoint.enabled``)."""
    return bool(options().enabled)


def rp_id():
    configured = options().rp_id
    if configured:
        return configured
    base_url = app_settings.base_url
    return (urlsplit(base_url).hostname if base_url else None) or "localhost"


def rp_name():
    return options().rp_name or DEFAULT_RP_NAME


def expected_origins():
    """The origins a ceremony may come from: the configured list, or the base URL's origin plus every
    exact trusted origin (a glob names no single origin a browser reports)."""
    configured = options().origins
    if configured is not None:
        candidates = list(configured)
    else:
        candidates = [app_settings.base_url] if app_settings.base_url else []
        candidates += [entry for entry in app_settings.trusted_origins if "*" not in entry and "?" not in entry]
    found = []
    for entry in candidates:
        origin = origins.origin_of(entry) if "://" in entry else None
        if origin and origin not in found:
            found.append(origin)
    return found


def require_user_verification():
    return options().authenticator_selection.user_verification == "required"
