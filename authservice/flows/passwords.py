"""Password policy and hashing helpers shared by sign-up, reset and change (core.md §9)."""

from django.contrib.auth.hashers import make_password

from authservice import app_settings
from authservice.errors import APIError, codes


def js_length(value):
    """Length as JavaScript counts it (UTF-16 code units), so limits match better-auth's."""
    return len(value.encode("utf-16-le")) // 2


def check_length(password):
    length = js_length(password)
    if length < app_settings.email_and_password.min_password_length:
        raise APIError(400, codes.PASSWORD_TOO_SHORT)
    if length > app_settings.email_and_password.max_password_length:
        raise APIError(400, codes.PASSWORD_TOO_LONG)


def burn_hash(password):
    """Hash for nothing, so an unknown user costs as much time as a known one (Django #20760)."""
    make_password(password)
