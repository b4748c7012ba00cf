"""The per-user budget of wrong second-factor codes: "ten in a row lock the code check for 15 minutes".

One :class:`TwoFactorLockout` row per user, whatever the method (TOTP, mailed code, backup code), so a
user with e-mail codes only is locked like one with TOTP. Only pending sign-ins spend it: a signed-in
user's own checks (enrolment) cannot lock them out.

Every sign-in's guess is checked under the user's row lock (``challenge.verify``), so the guesses
on one user's sign-ins take turns: :func:`admit` reads the row (refused while locked), the comparison
runs, and :func:`record` writes the outcome, all in one transaction that no other guess can enter.
Reading first and recording after is what let every guess in flight pass the read when the guesses
did not take turns (attack 17b, races); ``admit`` refuses to run outside that lock. A matching guess
clears the count (the owner is here); the success path is one read, no write, unless there was a
count to clear (bench/README.md, sign-in + TOTP).
"""

from datetime import timedelta

from django.utils import timezone

from authservice import app_settings
from authservice.errors import APIError, codes
from authservice.models import TwoFactorLockout


def _options():
    return app_settings.two_factor.account_lockout


def _rows(user):
    """``user``: a user or its primary key."""
    return TwoFactorLockout.objects.filter(user=user)


def open_for(user):
    """The user's budget row, made when a second factor is turned on, so a sign-in's guess finds it."""
    TwoFactorLockout.objects.get_or_create(user=user)


def admit(check):
    """The budget row of ``check.user`` for one guess, or 429 ACCOUNT_TEMPORARILY_LOCKED.

    ``None`` when the lockout does not apply (a signed-in user's own checks, or the setting is off).
    """
    if not (check.is_sign_in and _options().enabled):
        return None
    if not check.locked:
        raise RuntimeError("a guess is admitted only under the user's row lock (challenge.verify)")
    row = check.budget or TwoFactorLockout.objects.get_or_create(user=check.user)[0]
    now = timezone.now()
    if row.locked_until is not None and row.locked_until > now:
        raise APIError(429, codes.ACCOUNT_TEMPORARILY_LOCKED)
    if row.locked_until is None and row.failed_count >= _options().max_failed_attempts:
        # A spent budget whose lock was never set (a row written before this rule) still locks.
        _rows(check.user).update(locked_until=now + timedelta(seconds=_options().duration_seconds))
        raise APIError(429, codes.ACCOUNT_TEMPORARILY_LOCKED)
    return row


def record(row, matched):
    """Write the outcome of the guess ``admit`` let through: cleared on a match, else one more failure
    (the lock starts with the last one the budget allows; a lock that ran out starts a fresh count)."""
    if row is None:
        return
    if matched:
        if row.failed_count or row.locked_until is not None:
            _rows(row.user_id).update(failed_count=0, locked_until=None)
        return
    now = timezone.now()
    count = 1 if row.locked_until is not None else row.failed_count + 1
    locked_until = None
    if count >= _options().max_failed_attempts:
        locked_until = now + timedelta(seconds=_options().duration_seconds)
    _rows(row.user_id).update(failed_count=count, locked_until=locked_until)


def clear(user):
    """An operator's reset (or the user's own disable) lifts the lock."""
    _rows(user).delete()
