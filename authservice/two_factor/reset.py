"""Turning every second factor of a user off: the user's own disable, the admin's and the command's reset."""

import logging

from authservice import signals, users
from authservice.models import BackupCode, TwoFactor
from authservice.two_factor import challenge, devices, lockout

logger = logging.getLogger("authservice.mfa")


def clear(user):
    """TOTP, backup codes, trusted devices, pending sign-ins and the lock of ``user`` gone; 2FA off."""
    users.set_two_factor_enabled(user, False)
    TwoFactor.objects.filter(user=user).delete()
    BackupCode.objects.filter(user=user).delete()
    devices.revoke_all(user)
    challenge.forget_user(user)
    lockout.clear(user)


def _clear_passkeys(user):
    """The user's passkeys (each announced with ``passkey_removed``); how many were deleted."""
    from authservice.passkey import retirement  # noqa: PLC0415 - the passkey package imports flows

    return retirement.every_passkey(user)


def reset(user, by):
    """An operator's reset of a locked-out ``user``: every factor, logged at WARNING (``by`` says who)."""
    clear(user)
    passkeys = _clear_passkeys(user)
    logger.warning("MFA reset for user %s by %s (passkeys deleted: %d)", user.pk, by, passkeys)
    signals.two_factor_disabled.send(sender=type(user), user=user, reset_by=by)
