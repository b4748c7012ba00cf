"""Codes by e-mail (better-auth's ``otp`` method), through the mail queue (I7).

``send-otp`` only enqueues a task naming the challenge: the task makes the code, stores its keyed hash
on the challenge and mails it, so no code sits in the queue and the request costs the same whoever
asks. A new code replaces the previous one and gets a fresh ``allowed_attempts``.
"""

import secrets
from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from authservice import app_settings, ratelimit, tasks, users
from authservice.adapter import get_adapter
from authservice.errors import APIError, codes
from authservice.models import TwoFactor, TwoFactorChallenge
from authservice.tokens import constant_time_equals
from authservice.two_factor.crypto import code_hash, code_hashes


def _session_challenge(check):
    """The challenge row of a signed-in user's code: one per session, kept as long as the session."""
    session = check.found.session
    pending, _ = TwoFactorChallenge.objects.get_or_create(
        session_id=session.pk, defaults={"user": check.user, "expires_at": session.expires_at})
    return pending


# Mails a holder of the password can make us send: per pending sign-in (or signed-in session), and
# per user whatever the number of sign-ins opened (the per-IP rule alone allows one every ~3 s, forever).
MAILS_PER_CHALLENGE = 3
MAILS_PER_USER, MAILS_PER_USER_WINDOW = 10, 3600


def _count_mail(pending):
    per_challenge = ratelimit.hit(f"two-factor-otp|challenge|{pending.pk}",
                                  app_settings.two_factor.two_factor_cookie_max_age, MAILS_PER_CHALLENGE)
    per_user = ratelimit.hit(f"two-factor-otp|user|{pending.user_id}", MAILS_PER_USER_WINDOW, MAILS_PER_USER)
    retry_after = max(per_challenge or 0, per_user or 0)
    if retry_after:
        raise APIError(429, codes.TOO_MANY_OTP_REQUESTS,
                       headers={"Retry-After": str(retry_after), "X-Retry-After": str(retry_after)})


def offered_to(user):
    """Whether e-mailed codes are a second factor of ``user``: on, and not a TOTP user's.

    better-auth offers them to every 2FA user; we don't to one with confirmed TOTP. Their mailbox is
    what resets the password (and what a stolen session can move with change-email), so it must not
    also be the second factor: TOTP users use the app or a backup code.
    """
    return app_settings.two_factor.otp.enabled and not TwoFactor.objects.filter(user=user, verified=True).exists()


def _require_offered(user):
    if not app_settings.two_factor.otp.enabled:
        raise APIError(400, codes.OTP_NOT_CONFIGURED)
    if not offered_to(user):
        raise APIError(400, codes.OTP_NOT_ENABLED)


def send(ctx, check):
    _require_offered(check.user)
    pending = check.pending if check.is_sign_in else _session_challenge(check)
    _count_mail(pending)
    tasks.two_factor_otp_mail.enqueue(challenge_id=pending.pk)
    return {"status": True}


def deliver(*, challenge_id):
    """The task's half: a new code for a live challenge of an active user, mailed to that user."""
    options = app_settings.two_factor.otp
    pending = TwoFactorChallenge.objects.select_related("user").filter(
        pk=challenge_id, expires_at__gt=timezone.now()).first()
    if pending is None or not getattr(pending.user, "is_active", True) or not offered_to(pending.user):
        return  # gone, or TOTP was confirmed since the request: no code to a mailbox that is no factor
    code = "".join(secrets.choice("0123456789") for _ in range(options.digits))
    TwoFactorChallenge.objects.filter(pk=pending.pk).update(
        otp_hash=code_hash(code), otp_attempts=0,
        otp_expires_at=timezone.now() + timedelta(minutes=options.period))
    address = users.email_of(pending.user)
    get_adapter().send_mail("two-factor-otp", address, {
        "user": pending.user, "email": address, "otp": code, "minutes": options.period})


def verify(check, code):
    """``True`` for the live mailed code; 400 OTP_HAS_EXPIRED / TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE."""
    _require_offered(check.user)
    if check.is_sign_in:
        pending = check.pending
    else:
        pending = TwoFactorChallenge.objects.filter(session_id=check.found.session.pk).first()
    now = timezone.now()
    if pending is None:
        raise APIError(400, codes.OTP_HAS_EXPIRED)
    try:
        pending.refresh_from_db(fields=["otp_hash", "otp_expires_at", "otp_attempts"])
    except TwoFactorChallenge.DoesNotExist:
        # Ended meanwhile (2FA disabled, password changed, another code): as expired, not a 500.
        raise APIError(400, codes.OTP_HAS_EXPIRED) from None
    if not pending.otp_hash or pending.otp_expires_at is None or pending.otp_expires_at <= now:
        raise APIError(400, codes.OTP_HAS_EXPIRED)
    allowed = app_settings.two_factor.otp.allowed_attempts
    # Counted before comparing, atomically: parallel guesses cannot share one attempt.
    counted = TwoFactorChallenge.objects.filter(
        pk=pending.pk, otp_hash=pending.otp_hash, otp_attempts__lt=allowed).update(otp_attempts=F("otp_attempts") + 1)
    if not counted:
        raise APIError(400, codes.TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE)
    if not isinstance(code, str):
        return False
    # Every secret in use is compared (a code mailed just before a rotation still works), all of them
    # every time, so the time does not tell which one matched.
    matches = [constant_time_equals(candidate, pending.otp_hash) for candidate in code_hashes(code.strip())]
    if not any(matches):
        return False
    # Used once: the code is wiped by the request that matched it.
    return bool(TwoFactorChallenge.objects.filter(pk=pending.pk, otp_hash=pending.otp_hash).update(otp_hash=""))
