"""Random identifiers and secrets, HMAC signatures, constant-time comparison.

Every random value comes from ``secrets`` (a CSPRNG); every comparison of a secret goes through
``hmac.compare_digest`` so its timing does not tell how much of a guess was right.
"""

import base64
import hmac
import secrets
import string

from authservice import app_settings

ALNUM = string.ascii_letters + string.digits
URL_SAFE = ALNUM + "-_"
LOWER_ALNUM = string.digits + string.ascii_lowercase


def random_string(length, alphabet=ALNUM):
    return "".join(secrets.choice(alphabet) for _ in range(length))


def generate_id():
    """Record ids: 32 characters of ``[A-Za-z0-9]``, as better-auth makes them."""
    return random_string(32)


def session_token():
    return random_string(32)


def hmac_signature(value, secret=None):
    """Standard base64 (with padding) of HMAC-SHA256(secret, value): always 44 characters."""
    key = (secret or app_settings.secret()).encode()
    digest = hmac.digest(key, value.encode(), "sha256")  # hmac.new(...).digest(), in one call to OpenSSL
    return base64.b64encode(digest).decode()


def constant_time_equals(a, b):
    return hmac.compare_digest(str(a).encode(), str(b).encode())


def sign(value, secret=None):
    return f"{value}.{hmac_signature(value, secret)}"


def unsign(signed, secret=None):
    """The value of ``value.signature``, or ``None`` when the signature does not verify."""
    value, dot, signature = signed.rpartition(".")
    if not dot or len(signature) != 44 or not signature.endswith("="):
        return None
    if not constant_time_equals(hmac_signature(value, secret), signature):
        return None
    return value
