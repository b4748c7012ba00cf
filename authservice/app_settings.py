"""The app's settings: one dict, ``settings.AUTHSERVICE``, read through this module only.

Every key has a default below, mirroring better-auth's option of the same name (snake_case). Nested
dicts are merged key by key over the defaults, so a project sets only what it changes::

    AUTHSERVICE = {
        "base_url": "https://auth.example.com",
        "trusted_origins": ["https://app.example.com"],
        "session": {"expires_in": 3600 * 24 * 30},
    }

Read a value as ``auth_settings.session.expires_in``. An unknown key raises ``AttributeError`` here
and is reported by the system check ``authservice.E001``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from authservice.conf import NamespacedSettings

DEFAULTS: dict[str, Any]
DEFAULTS = {
    # Where every endpoint is mounted.
    "base_path": "/api/auth",
    # Public origin of the service (``https://auth.example.com``); links in mails and default redirect
    # targets are built from it, and its origin is always trusted. ``None``: the request's own host.
    "base_url": None,
    # Signing secret for cookies and tokens; ``None`` means Django's SECRET_KEY [D14].
    "secret": None,
    # Origins trusted for Origin checks and callback URLs, besides the base URL's origin (core.md §1.9).
    "trusted_origins": [],
    # Cookie names are ``[__Secure-]{cookie_prefix}.{key}``; ``cookie_names`` renames single keys [D5].
    "cookie_prefix": "auth",
    "cookie_names": {},
    # ``None``: Secure cookies exactly when base_url is https. True/False forces it.
    "secure_cookies": None,
    # Domain attribute for cross-subdomain cookies; ``None`` sends none.
    "cookie_domain": None,
    "email_and_password": {
        "enabled": True,
        "disable_sign_up": False,
        "require_email_verification": False,
        "auto_sign_in": True,
        "min_password_length": 8,
        "max_password_length": 128,
        "reset_password_enabled": True,
        # Seconds a mailed reset link lives, counted from the request (not from when the queue sent it).
        "reset_password_token_expires_in": 3600,
        # better-auth's revokeSessionsOnPasswordReset: a successful reset also deletes every session
        # of the user (signed out everywhere). On by default here (better-auth: off), as OWASP's
        # Forgot Password sheet asks: whoever reset the password holds the mailbox, and a session
        # from before may be a pre-hijacker's, even once the address was verified (the victim may
        # have clicked a verification mail the attacker asked for), I1. Off, a reset of a user
        # whose e-mail is not verified still deletes every session of it. A reset, like a password
        # change, always deletes the user's other outstanding reset links, and so does a change of
        # e-mail.
        "revoke_sessions_on_password_reset": True,
    },
    "email_verification": {
        "enabled": True,
        # ``None``: follows email_and_password.require_email_verification.
        "send_on_sign_up": None,
        "send_on_sign_in": False,
        "auto_sign_in_after_verification": False,
        "expires_in": 3600,
    },
    "change_email": {
        "enabled": True,
        "update_email_without_verification": False,
        # Flow (b) of core.md §4.13: confirm on the old address first when it is verified.
        "send_confirmation_to_old_email": False,
    },
    "delete_user": {
        "enabled": True,
        # Send a confirmation mail instead of deleting at once.
        "send_delete_verification": False,
        "delete_token_expires_in": 86400,
    },
    "session": {
        "expires_in": 604800,
        "update_age": 86400,
        "fresh_age": 86400,
    },
    "rate_limit": {
        "enabled": True,
        "window": 10,
        "max": 100,
        # "database" (a table of counters) or "cache" (Django's default cache: use Redis, never a
        # per-process cache, so that all server processes count together) [D8].
        "storage": "database",
        # {"/path" or glob: {"window": s, "max": n} or False}
        "custom_rules": {},
    },
    # Header the reverse proxy writes the client address into (e.g. "X-Forwarded-For") [D9].
    "ip_address_header": None,
    "trusted_proxy_count": 1,
    "account_linking": {
        "enabled": True,
        "trusted_providers": [],
        "require_local_email_verified": True,
        "allow_different_emails": False,
        "allow_unlinking_all": False,
    },
    # Where OAuth errors land instead of {base}/error.
    "error_url": None,
    # Dotted path of the class that sends mails and shapes records; see authservice.adapter.
    "adapter": "authservice.adapter.DefaultAdapter",
    # Social providers by id (issue 5); core.md §5.0.
    "social_providers": {},
    # Skip the Origin and callback-URL checks. Never implied by DEBUG or tests [D13].
    "disable_origin_check": False,
}


# Dicts whose keys are chosen by the user (ids, paths), returned as plain dicts.
_settings = NamespacedSettings(
    "AUTHSERVICE", DEFAULTS, raw_dicts={"cookie_names", "custom_rules", "social_providers"}
)
unknown_keys = _settings.unknown_keys


def __getattr__(name: str) -> Any:
    return getattr(_settings.section(), name)


def secret() -> str:
    return _settings.section().secret or settings.SECRET_KEY


@receiver(setting_changed)
def _reset_dependents(setting: str, **kwargs: Any) -> None:
    if setting in ("AUTHSERVICE", "SECRET_KEY"):
        from authservice import origins  # noqa: PLC0415 - avoid an import cycle at load time

        origins.reset()
