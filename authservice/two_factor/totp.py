"""RFC 6238 TOTP through pyotp: each code is accepted once, across every server process."""

import time

import pyotp

from authservice import app_settings, db
from authservice.models import TwoFactor
from authservice.tokens import constant_time_equals


def new_secret():
    return pyotp.random_base32()  # 32 base32 characters: 160 bits, RFC 4226's recommended length


def _totp(secret):
    options = app_settings.two_factor.totp
    return pyotp.TOTP(secret, digits=options.digits, interval=options.period)


def issuer():
    from urllib.parse import urlsplit

    configured = app_settings.two_factor.issuer
    if configured:
        return configured
    return urlsplit(app_settings.base_url or "").hostname or "authservice"


def uri(secret, email, issuer_name=None):
    return _totp(secret).provisioning_uri(name=email, issuer_name=issuer_name or issuer())


def matching_step(secret, code, now=None):
    """The time step (t-1, t or t+1) whose code is ``code``, or ``None``."""
    code = (code or "").strip()
    totp = _totp(secret)
    if len(code) != totp.digits or not code.isdigit():
        return None
    now = time.time() if now is None else now
    step = int(now // totp.interval)
    found = None
    for candidate in (step - 1, step, step + 1):
        # Every candidate is compared, so the time does not tell which step matched.
        if constant_time_equals(totp.generate_otp(candidate), code):
            found = candidate
    return found


def use_step(factor, step):
    """Record ``step`` as used; ``False`` when it (or a later one) already was: a replay.

    One conditional UPDATE: of two processes accepting the same code, only one row update wins.
    """
    return db.update_by_pk(TwoFactor, factor.pk, {"last_used_step": step}, below={"last_used_step": step})
