"""better-auth's ``twoFactor`` plugin (1.7.5's wire): TOTP, e-mail codes, backup codes, trusted devices.

Modules: ``crypto`` (secrets at rest, keyed code hashes), ``totp``, ``backup_codes``, ``devices``
(trusted devices), ``challenge`` (the pending sign-in and every verification), ``otp`` (mailed codes).
The endpoints are ``authservice/endpoints/two_factor.py``; docs/mfa.md is the guide.
"""

from authservice import app_settings
from authservice.two_factor import errors  # noqa: F401 - defines the error codes


def enabled():
    return bool(app_settings.two_factor.enabled)


def turn_on(user):
    """The user's second factor is on: the wire's ``twoFactorEnabled``, and its lockout budget ready."""
    from authservice import users  # noqa: PLC0415 - users imports the models this package's modules use
    from authservice.two_factor import lockout  # noqa: PLC0415

    users.set_two_factor_enabled(user, True)
    lockout.open_for(user)
