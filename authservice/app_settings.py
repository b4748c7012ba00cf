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
from authservice.setting_shapes import AdditionalFields, BasePath, Origin, RateRules, RequiredFor, SocialProviders
from authservice.setting_types import URL, Bool, Choice, CookieName, DictOf, DottedPath, Int, ListOf, Optional, Str

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
    # {"session_token": "sid", ...}: a full name for one cookie, replacing prefix and key.
    "cookie_names": {},
    # ``None``: Secure cookies exactly when base_url is https. True/False forces it.
    "secure_cookies": None,
    # Domain attribute for cross-subdomain cookies; ``None`` sends none.
    "cookie_domain": None,
    # better-auth's advanced.defaultCookieAttributes: attributes of every cookie set.
    "cookie_attributes": {
        # "lax" sends cookies on this site's requests and on links from other sites; "strict" on this
        # site's requests only (the OAuth state cookie stays "lax", or no social or OIDC sign-in could
        # come back); "none" on every request, which an SPA on another *site* (https://app.example
        # calling https://auth.example) needs for fetch(..., {credentials: "include"}) to send and
        # keep them. Browsers drop "none" cookies that are not Secure (W011): use an https base_url
        # or secure_cookies=True. Another *subdomain* is the same site: "lax" serves it. The SAML
        # relay_state cookie keeps its own rule (SameSite=None on https, Lax on http).
        "same_site": "lax",
    },
    "email_and_password": {
        # The e-mail and password endpoints (sign-up, sign-in, password reset).
        "enabled": True,
        # Refuse new accounts by sign-up/email; existing users still sign in.
        "disable_sign_up": False,
        # Sign-in is refused (403 EMAIL_NOT_VERIFIED) until the address is verified.
        "require_email_verification": False,
        # Sign-up also signs the new user in (no session when verification is required).
        "auto_sign_in": True,
        # Bounds of a new password, in characters.
        "min_password_length": 8,
        "max_password_length": 128,
        # The request-password-reset and reset-password endpoints.
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
        # Verification mails and the verify-email endpoint.
        "enabled": True,
        # ``None``: follows email_and_password.require_email_verification.
        "send_on_sign_up": None,
        # Mail a new link when an unverified user tries to sign in.
        "send_on_sign_in": False,
        # Following the mailed link also signs the user in.
        "auto_sign_in_after_verification": False,
        # Seconds a verification link lives.
        "expires_in": 3600,
    },
    "change_email": {
        # The change-email endpoint.
        "enabled": True,
        # Change an unverified address at once, without a confirmation mail.
        "update_email_without_verification": False,
        # Flow (b) of core.md §4.13: confirm on the old address first when it is verified.
        "send_confirmation_to_old_email": False,
    },
    "delete_user": {
        # The delete-user endpoint.
        "enabled": True,
        # Send a confirmation mail instead of deleting at once.
        "send_delete_verification": False,
        # Seconds a mailed deletion link lives.
        "delete_token_expires_in": 86400,
    },
    "session": {
        # Seconds a session lives (7 days).
        "expires_in": 604800,
        # Seconds after which a use of the session extends it by expires_in; 0: on every use.
        "update_age": 86400,
        # Seconds a session counts as fresh for sensitive changes (delete-user...); 0: always fresh.
        "fresh_age": 86400,
        # better-auth's session.cookieCache: get-session answers from a signed ``session_data``
        # cookie for max_age seconds without reading the database. A session revoked elsewhere
        # stays visible to get-session on other devices until then (docs/sessions.md).
        "cookie_cache": {
            # get-session answers from the signed session_data cookie (better-auth's cookieCache).
            "enabled": False,
            # Seconds the cache is trusted (and its cookie lives).
            "max_age": 300,
            # The encoding: only better-auth's "compact" (signed base64url JSON) is implemented.
            "strategy": "compact",
            # Changing it invalidates every cache already issued.
            "version": "1",
        },
    },
    "rate_limit": {
        # Limit requests per client IP and path (core.md §8).
        "enabled": True,
        # The default rule: at most ``max`` requests per ``window`` seconds.
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
    # Proxies in front of the service: the client is this many addresses from the header's end.
    "trusted_proxy_count": 1,
    "account_linking": {
        # Link a social account to the existing user of the same e-mail address.
        "enabled": True,
        # Provider ids whose e-mail addresses are trusted for linking even when not marked verified.
        "trusted_providers": [],
        # Link only when the existing user's own address is verified.
        "require_local_email_verified": True,
        # link-social may link an account whose e-mail differs from the user's.
        "allow_different_emails": False,
        # unlink-account may remove the user's last way to sign in.
        "allow_unlinking_all": False,
    },
    # Where OAuth errors land instead of {base}/error.
    "error_url": None,
    # Dotted path of the class that sends mails and shapes records; see authservice.adapter.
    "adapter": "authservice.adapter.DefaultAdapter",
    # Social providers by id (issue 5); core.md §5.0.
    "social_providers": {},
    # better-auth's ``bearer`` plugin, for mobile and server clients that keep no cookies. On, every
    # endpoint that reads the session, the middleware and the DRF class also accept
    # ``Authorization: Bearer <token>``, and every answer that sets the session cookie also carries
    # ``set-auth-token`` (the cookie's signed value) with ``Access-Control-Expose-Headers``. A bearer
    # request carries no ambient credential, so the Origin check does not apply to it; one that also
    # sends cookies is checked as any cookie request is.
    "bearer": {
        "enabled": False,
        # True: only signed tokens (the ``set-auth-token`` value) are accepted. False: the raw token
        # of a sign-in's body is accepted too, as better-auth does.
        "require_signature": False,
    },
    "user": {
        # better-auth's user.additionalFields: {"favoriteColor": {"type": "string"}, ...}, keyed by the
        # wire (camelCase) name. Options: "type" (string, number, boolean, date, string[], number[]),
        # "required" (sign-up must carry it; default False), "default_value" (a value, or a callable
        # called per new user, social and SSO sign-ups included), "input" (clients may set it at
        # sign-up and update-user; default True), "returned" (answers show it; default True),
        # "field_name" (the user model's field; default the key in snake_case). Stored in that model
        # field when the model has it, else in AuthProfile.data (JSON). See docs/additional-fields.md.
        "additional_fields": {},
    },
    # better-auth's ``twoFactor`` plugin: TOTP, e-mail codes, backup codes, trusted devices
    # (docs/mfa.md). Off, its endpoints have no routes and the user carries no ``twoFactorEnabled``.
    "two_factor": {
        "enabled": False,
        # The issuer an authenticator app shows; ``None``: the base URL's host name.
        "issuer": None,
        # ``/two-factor/enable`` turns TOTP on at once, without a first valid code.
        "skip_verification_on_enable": False,
        # Seconds a trusted device skips the second factor (rotated on each use).
        "trust_device_max_age": 2592000,
        # Seconds a pending sign-in (the two_factor cookie) waits for its code.
        "two_factor_cookie_max_age": 600,
        "otp": {
            # Codes by e-mail, through the mail queue (I7).
            "enabled": True,
            # Minutes a mailed code lives (better-auth's ``period``).
            "period": 3,
            # Digits of a mailed code.
            "digits": 6,
            # Wrong guesses one mailed code survives.
            "allowed_attempts": 5,
        },
        "totp": {
            # Digits of a TOTP code (RFC 6238; authenticator apps expect 6).
            "digits": 6,
            # Seconds per code; codes of the step before and after are accepted too, each once.
            "period": 30,
        },
        "backup_codes": {
            "amount": 10,
            "length": 10,
        },
        # better-auth's accountLockout: consecutive wrong codes of one user, across sign-ins.
        "account_lockout": {
            "enabled": True,
            "max_failed_attempts": 10,
            "duration_seconds": 900,
        },
        # Users who must enrol a second factor (TOTP or e-mail codes) before any endpoint but the
        # enrolment ones answers them: None, user attributes of which any true applies
        # (["is_staff", "is_superuser"]), or a dotted path to callable(user) -> bool. SSO sessions are
        # exempt (the IdP owns MFA); a passkey does not count as enrolment (docs/mfa.md).
        "required_for": None,
        # Former ``secret`` values: TOTP secrets encrypted under them still decrypt until
        # ``manage.py two_factor_reencrypt`` re-encrypts them under the current one (docs/mfa.md).
        "secret_fallbacks": [],
    },
    # better-auth's passkey plugin (@better-auth/passkey): WebAuthn registration and sign-in, see
    # docs/passkeys.md. The RP ID, RP name and expected origins come from here, never from a request.
    "passkey": {
        "enabled": False,
        # The WebAuthn relying-party ID; ``None``: the base URL's hostname, as better-auth. Browsers refuse
        # an IP address: serve the service as a name (``localhost`` in development).
        "rp_id": None,
        # The name authenticators show; ``None``: "authservice".
        "rp_name": None,
        # Origins a ceremony may come from (clientDataJSON.origin). ``None``: the base URL's origin and
        # every exact (non-glob) trusted origin. better-auth trusts the request's Origin header instead.
        "origins": None,
        # better-auth's authenticatorSelection, merged over residentKey/userVerification "preferred".
        "authenticator_selection": {
            "resident_key": "preferred",
            "user_verification": "preferred",
            # ``None``: any; "platform" or "cross-platform". The query's authenticatorAttachment wins.
            "authenticator_attachment": None,
        },
        # Seconds a registration or sign-in challenge (and its cookie) lives; better-auth's 300.
        "challenge_max_age": 300,
    },
    # Skip the Origin and callback-URL checks. Never implied by DEBUG or tests [D13].
    "disable_origin_check": False,
}


# What a key may hold where its default does not say it (authservice/setting_types.py); every other
# key must have its default's type. The system checks validate the project's values against these.
TYPES = {
    "base_path": BasePath(),
    "base_url": Optional(URL()),
    "secret": Optional(Str()),
    "trusted_origins": ListOf(Origin()),
    "cookie_prefix": CookieName(),
    "cookie_names": DictOf(CookieName()),
    "secure_cookies": Optional(Bool()),
    "cookie_domain": Optional(Str()),
    "cookie_attributes.same_site": Choice("lax", "strict", "none"),
    "email_verification.send_on_sign_up": Optional(Bool()),
    "session.update_age": Int(positive=False),
    "session.fresh_age": Int(positive=False),
    "session.cookie_cache.strategy": Choice("compact"),
    "rate_limit.storage": Choice("database", "cache"),
    "rate_limit.custom_rules": RateRules(),
    "ip_address_header": Optional(Str()),
    "account_linking.trusted_providers": ListOf(Str()),
    "error_url": Optional(URL(relative=True)),
    "adapter": DottedPath("a dotted path to an adapter class", of_class=True, path_only=True),
    "social_providers": SocialProviders(),
    "user.additional_fields": AdditionalFields(),
    "two_factor.issuer": Optional(Str()),
    "two_factor.required_for": RequiredFor(),
    "two_factor.secret_fallbacks": ListOf(Str()),
    "passkey.rp_id": Optional(Str()),
    "passkey.rp_name": Optional(Str()),
    "passkey.origins": Optional(ListOf(URL())),
    "passkey.authenticator_selection.resident_key": Choice("discouraged", "preferred", "required"),
    "passkey.authenticator_selection.user_verification": Choice("discouraged", "preferred", "required"),
    "passkey.authenticator_selection.authenticator_attachment": Optional(Choice("platform", "cross-platform")),
}

# Dicts whose keys are chosen by the user (ids, paths), returned as plain dicts.
_settings = NamespacedSettings(
    "AUTHSERVICE", DEFAULTS, raw_dicts={"cookie_names", "custom_rules", "social_providers", "additional_fields"}
)
unknown_keys = _settings.unknown_keys
namespace = _settings  # for the system checks and the settings reference


def __getattr__(name: str) -> Any:
    # ``_section or section()``: a call less on every read of a setting (a few dozen per request).
    return getattr(_settings._section or _settings.section(), name)


def secret() -> str:
    return (_settings._section or _settings.section()).secret or settings.SECRET_KEY


@receiver(setting_changed)
def _reset_dependents(setting: str, **kwargs: Any) -> None:
    if setting in ("AUTHSERVICE", "SECRET_KEY"):
        from authservice import origins  # noqa: PLC0415 - avoid an import cycle at load time

        origins.reset()
