"""The second step of a sign-in, and every code check (better-auth's ``verifyTwoFactor``).

A password sign-in of a user with 2FA creates no session: it stores a :class:`TwoFactorChallenge`
and sets the signed ``two_factor`` cookie naming it. That cookie is read here and nowhere else, so
it opens nothing but the verify and send-otp endpoints. A verification either runs for a signed-in
user (enrolment, re-checks) or consumes the challenge and creates the session through
``sessions.create_session``, the one place sessions are made.

Guessing is bounded three ways: 5 wrong codes per challenge (the 6th try is
``TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE`` and the challenge is gone), ``account_lockout`` across
challenges per user (``lockout``, one row per user for every method), and the rate limiter's rule for
``/two-factor/*`` per IP. Both budgets are spent before a code is compared (:func:`guess`).

Every code check runs through :func:`verify`: one transaction under the user's row lock (see there).
"""

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from authservice import app_settings, db, signals, users
from authservice.cookies import signed_value
from authservice.errors import APIError, codes
from authservice.flows import sessions
from authservice.models import TwoFactor, TwoFactorChallenge, TwoFactorLockout
from authservice.two_factor import devices, lockout, otp

COOKIE = "two_factor"
ATTEMPTS_PER_CHALLENGE = 5  # better-auth's beginAttempt(5)


def methods_of(user):
    # One query: e-mailed codes are offered exactly when TOTP is not confirmed (otp.offered_to).
    if db.get_row(TwoFactor, user=user.pk, verified=True) is not None:
        return ["totp"]
    return ["otp"] if app_settings.two_factor.otp.enabled else []


def required(user):
    """Whether a session for ``user`` must pass a second factor first."""
    return bool(app_settings.two_factor.enabled and users.two_factor_enabled_of(user))


def begin_sign_in(ctx, user, remember):
    """The sign-in answer when ``user`` must give a second factor, else ``None`` (go on and sign in).

    Called before any session exists: a trusted device of this very user skips the check.
    """
    if not required(user):
        return None
    if devices.skip_for(ctx, user):
        return None
    max_age = app_settings.two_factor.two_factor_cookie_max_age
    pending = db.insert(TwoFactorChallenge(
        user=user, remember=remember, expires_at=timezone.now() + timedelta(seconds=max_age)))
    ctx.set_cookie(COOKIE, signed_value(pending.pk), max_age=max_age)
    return {"twoFactorRedirect": True, "twoFactorMethods": methods_of(user)}


@dataclass
class Verification:
    """Who is being verified: a signed-in user (``found``) or a pending sign-in (``pending``)."""

    user: object
    found: object = None
    pending: TwoFactorChallenge | None = None
    # Set by :func:`verify` once the user's row is locked, with what the lock's read brought along
    # (the TOTP row, the lockout budget); the session a sign-in made, announced after the commit.
    locked: bool = False
    factor: TwoFactor | None = None
    budget: TwoFactorLockout | None = None
    session: object = None

    @property
    def is_sign_in(self):
        return self.pending is not None


def _invalid_cookie():
    return APIError(401, codes.INVALID_TWO_FACTOR_COOKIE)


def start(ctx, lock=False):
    """The caller as a :class:`Verification`; 401 INVALID_TWO_FACTOR_COOKIE when neither fits.

    ``lock`` (a code check, :func:`verify`): a pending sign-in's user row is locked as it is found.
    """
    found = sessions.get_session(ctx)
    if found is not None:
        return Verification(user=found.user, found=found)
    challenge_id = ctx.signed_cookie(COOKIE)
    pending = pending_sign_in(challenge_id, timezone.now(), lock=lock) if challenge_id else None
    if pending is None:
        raise _invalid_cookie()
    return Verification(user=pending.user, pending=pending)


def pending_sign_in(challenge_id, now, lock=False):
    """The live pending sign-in ``challenge_id`` with its user, or ``None`` (used up, expired, an
    e-mail code's challenge, an inactive user).

    One statement reads it with its user and, with ``lock``, takes ``users.lock``'s lock on the user's
    row, sparing a round trip: the user comes back as it is once locked. The challenge row is not
    locked; what a guess changes on it is re-checked by the conditional statements that write it.
    Compiled once (authservice.db), the conditions checked here on the row read: the same answer as
    the ORM's ``filter(pk=..., session_id=None, expires_at__gt=now)`` (tests/security, fast paths).
    """
    pending = db.get_row(TwoFactorChallenge, related="user", lock_related=lock, id=challenge_id)
    if (pending is None or pending.session_id is not None or not pending.expires_at > now
            or not getattr(pending.user, "is_active", True)):
        return None
    return pending


def factor_of(user):
    return TwoFactor.objects.filter(user=user).first()


def factor_for(check):
    """The TOTP row of the user being verified: the one read under the lock, for a sign-in."""
    return check.factor if check.locked else factor_of(check.user)


def _read_under_lock(check):
    """What a sign-in's guess needs, read once its user's row is locked (:func:`start`): the TOTP row
    and the lockout budget, in one statement (bench/README.md, sign-in + TOTP).

    The read comes *after* the lock, in a statement of its own: under READ COMMITTED a statement sees
    the rows committed before it began, so values read by the locking statement itself (a join, a
    subquery) would predate the guess that held the lock before us, and its count would be lost
    (tests/security/test_attack17b_races.py).
    """
    check.factor, check.budget = db.get_pair(TwoFactor, TwoFactorLockout, user=check.user.pk)
    check.locked = True


def verify(ctx, work):
    """``work(check)`` for the caller of a code check, as one transaction; returns its answer.

    One transaction because the second step of a sign-in writes five rows (the guess counted on the
    user, the time step used, the challenge consumed, the session, ``last_login``): one commit each made
    the step cost five WAL flushes, most of its time on a loaded machine (bench/README.md, sign-in +
    TOTP). An :class:`APIError` still commits what was written before it (a wrong code's count must
    stay), then propagates; any other exception rolls everything back, as if the guess never ran.

    A pending sign-in's user row is locked first, by the statement that finds the sign-in
    (:func:`pending_sign_in`), as every flow that retires a way in does (``users.lock``): the rows
    locked after it cannot deadlock with a reset or a proof racing this check, and two guesses on one
    user's sign-ins take turns, which is what lets :func:`guess` count a guess on the challenge after
    the comparison.
    """
    failure = check = None
    with transaction.atomic():
        try:
            check = start(ctx, lock=True)
            if check.is_sign_in:
                _read_under_lock(check)
            answer = work(check)
        except APIError as error:
            failure = error
    if failure is not None:
        raise failure
    if check.session is not None:
        sessions.announce_sign_in(ctx, check.user, check.session)
    return answer


def _too_many_attempts(ctx, check):
    TwoFactorChallenge.objects.filter(pk=check.pending.pk).delete()
    ctx.delete_cookie(COOKIE)
    return APIError(400, codes.TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE)


def guess(ctx, check, compare, wrong):
    """Run ``compare()`` (``True`` for a valid code) as one guess of every budget; raise ``wrong`` if it fails.

    Every method goes through here, and only inside :func:`verify`: the user's row lock makes the
    guesses on one user's sign-ins take turns, so each budget can be read before the comparison and
    written after it, in the statement that records the outcome, with no guess slipping in between.
    The per-user budget (``lockout``) refuses a locked user before any code is looked at. The
    challenge's own 5 tries are counted by a wrong code, and a right one consumes the challenge in
    :func:`succeed`, both only while fewer than 5 tries were spent.
    """
    if check.is_sign_in and not check.locked:
        raise RuntimeError("a sign-in's code is checked only inside challenge.verify (the user's row lock)")
    budget = lockout.admit(check)
    matched = compare()  # an exception rolls the whole check back: nothing compared, nothing counted
    lockout.record(budget, matched)
    if not matched:
        if check.is_sign_in and not TwoFactorChallenge.objects.filter(
                pk=check.pending.pk, attempts__lt=ATTEMPTS_PER_CHALLENGE).update(attempts=F("attempts") + 1):
            raise _too_many_attempts(ctx, check)
        raise wrong


def succeed(ctx, check, method, trust_device=False, create_session=True):
    """The answer of a valid code: ``{token, user}``, a new session for a pending sign-in."""
    user = check.user
    if not check.is_sign_in:
        signals.two_factor_verified.send(sender=type(user), user=user, method=method, session=check.found.session)
        return {"token": check.found.session.token, "user": users.to_wire(user)}
    from authservice.flows.email_password import check_email_verified  # noqa: PLC0415 - it imports this module

    check_email_verified(ctx, user)
    deleted = db.delete_by_pk(TwoFactorChallenge, check.pending.pk, below={"attempts": ATTEMPTS_PER_CHALLENGE})
    ctx.delete_cookie(COOKIE)
    if not deleted:
        if TwoFactorChallenge.objects.filter(pk=check.pending.pk).exists():
            raise _too_many_attempts(ctx, check)  # a right code after the 5 wrong ones is still refused
        raise _invalid_cookie()  # a concurrent request used the same challenge first
    session = None
    if create_session:
        # Announced by verify() after the commit: a receiver that raises cannot roll the session back.
        session = check.session = sessions.create_session(
            ctx, user, check.pending.remember, announce=False, method="two_factor")
    if trust_device:
        devices.trust(ctx, user)
    signals.two_factor_verified.send(sender=type(user), user=user, method=method, session=session)
    return {"token": session.token if session else None, "user": users.to_wire(user)}


def forget_user(user):
    """End every pending sign-in of ``user`` (a password change, a reset of its factors)."""
    TwoFactorChallenge.objects.filter(user=user).delete()
