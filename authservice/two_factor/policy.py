"""``two_factor.required_for``: who must enrol a second factor before the service answers them.

A user the setting applies to, whose ``twoFactorEnabled`` is false, is *enrolment pending*. Their
session exists (they need one to enrol) but opens nothing else. That is decided once, in
:func:`authservice.flows.sessions.resolve_session`, which every way in reads the session through:
the endpoints (``sessions.get_session``, refusing with 403 ``TWO_FACTOR_ENROLLMENT_REQUIRED`` unless the
endpoint is declared ``during_enrolment=True``), the middleware's ``request.user`` and DRF's
``SessionTokenAuthentication`` (both: not authenticated).

Exempt: sessions made by SSO (the IdP owns the second factor; docs/mfa.md). A passkey does not count
as enrolment: ``required_for`` asks for TOTP or e-mail codes (twoFactorEnabled), as the docs say.
"""

import functools

from django.utils.module_loading import import_string

from authservice import app_settings, users

# Sign-in methods whose sessions the policy leaves alone.
EXEMPT_METHODS = frozenset({"sso"})


@functools.lru_cache(maxsize=8)
def _imported(path):
    return import_string(path)


def applies_to(user):
    """Whether ``required_for`` names ``user`` (whether or not they enrolled)."""
    required_for = app_settings.two_factor.required_for
    if required_for is None or not app_settings.two_factor.enabled:
        return False
    if callable(required_for):
        return bool(required_for(user))
    if isinstance(required_for, str):
        return bool(_imported(required_for)(user))
    return any(getattr(user, name, False) for name in required_for)


def enrolment_pending(session, user):
    """Whether ``session`` of ``user`` may only be used to enrol a second factor."""
    if session.sign_in_method in EXEMPT_METHODS:
        return False
    return applies_to(user) and not users.two_factor_enabled_of(user)


def second_factor_required(user):
    """Whether a password alone must never sign ``user`` in: they turned a second factor on, or
    ``required_for`` names them. Ways in that only know the password (Django's ModelBackend,
    ``authservice.backends``) refuse such users."""
    if not app_settings.two_factor.enabled:
        return False
    return bool(users.two_factor_enabled_of(user)) or applies_to(user)
