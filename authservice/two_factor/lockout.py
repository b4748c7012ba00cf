"""The per-user budget of wrong second-factor codes: "ten in a row lock the code check for 15 minutes".

One :class:`TwoFactorLockout` row per user, whatever the method (TOTP, mailed code, backup code), so a
user with e-mail codes only is locked like one with TOTP. Only pending sign-ins spend it: a signed-in
user's own checks (enrolment) cannot lock them out.

A guess *reserves* its place before any code is compared, with one conditional UPDATE (budget left and
not locked -> +1, else refuse). Reading the lock and recording the failure afterwards would let every
guess in flight at once pass the read (attack 17b, races): PostgreSQL re-checks an UPDATE's WHERE
after waiting for the row, so reservations cannot overshoot. A guess that matched gives the whole
budget back (the owner is here); one that never reached a comparison gives its place back.
"""

from datetime import timedelta

from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from authservice import app_settings
from authservice.errors import APIError, codes
from authservice.models import TwoFactorLockout


def _options():
    return app_settings.two_factor.account_lockout


def _rows(user):
    return TwoFactorLockout.objects.filter(user=user)


def _take(user, now):
    """One UPDATE: +1 within budget, or a fresh count of 1 when the previous lock has run out."""
    expired = Q(locked_until__lte=now)
    return _rows(user).filter(Q(locked_until__isnull=True, failed_count__lt=_options().max_failed_attempts)
                              | expired).update(
        failed_count=Case(When(expired, then=Value(1)), default=F("failed_count") + 1),
        locked_until=None)


def _lock(user, now):
    """Start the lock once the budget is spent (idempotent: the first to see it sets the end)."""
    _rows(user).filter(failed_count__gte=_options().max_failed_attempts, locked_until__isnull=True).update(
        locked_until=now + timedelta(seconds=_options().duration_seconds))


def open_for(user):
    """The user's budget row, made when a second factor is turned on: a sign-in's guess is then the one
    UPDATE of :func:`reserve`, not a miss, an insert and a retry (bench/README.md, sign-in + TOTP)."""
    TwoFactorLockout.objects.get_or_create(user=user)


def reserve(check):
    """Spend one guess of ``check.user``'s budget, or 429 ACCOUNT_TEMPORARILY_LOCKED.

    Returns whether a guess was counted (``False`` when the lockout does not apply).
    """
    if not (check.is_sign_in and _options().enabled):
        return False
    user, now = check.user, timezone.now()
    if _take(user, now):
        return True
    _, created = TwoFactorLockout.objects.get_or_create(user=user)
    if created and _take(user, now):
        return True
    _lock(user, now)  # a spent budget whose last guess never got to record it still locks
    raise APIError(429, codes.ACCOUNT_TEMPORARILY_LOCKED)


def failed(user):
    _lock(user, timezone.now())


def give_back(user):
    """The guess reserved never compared a code (its pending sign-in or mailed code was used up)."""
    _rows(user).filter(failed_count__gt=0, locked_until__isnull=True).update(failed_count=F("failed_count") - 1)


def succeeded(user):
    _rows(user).update(failed_count=0, locked_until=None)


def clear(user):
    """An operator's reset (or the user's own disable) lifts the lock."""
    _rows(user).delete()
