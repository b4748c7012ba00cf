"""TOTP secrets encrypted at rest, and keyed hashes of single-use codes.

The encryption key is derived (HKDF-SHA256) from the deployment's secret (``AUTHSERVICE["secret"]``,
else ``SECRET_KEY``), never stored. Rotating that secret: list the old one in
``two_factor.secret_fallbacks`` (and, for ``SECRET_KEY``, Django's ``SECRET_KEY_FALLBACKS``), then run
``manage.py two_factor_reencrypt``; once it reports 0 left, drop the old secret (docs/mfa.md).
Backup and mailed codes are stored as hashes, which cannot be re-keyed: they are checked under every
secret in use, so backup codes made before a rotation work until their secret leaves the fallbacks.
"""

import base64
import functools
import hashlib
import hmac

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from authservice import app_settings

_INFO = b"authservice two-factor secret v1"


def _fernet(secret):
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(secret.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def secrets_in_use():
    """The current secret first, then every fallback still accepted for decryption."""
    current = app_settings.secret()
    fallbacks = list(app_settings.two_factor.secret_fallbacks)
    if app_settings.namespace.section().secret is None:  # the key comes from SECRET_KEY
        fallbacks += list(getattr(settings, "SECRET_KEY_FALLBACKS", []))
    return [current, *[s for s in fallbacks if s != current]]


@functools.lru_cache(maxsize=4)
def _keys_for(secrets):
    return MultiFernet([_fernet(secret) for secret in secrets])


def _keys():
    # Derived once per set of secrets (HKDF and the Fernet objects cost as much as a decryption):
    # keyed by the secrets themselves, so a rotation (new settings) derives the new keys at once.
    return _keys_for(tuple(secrets_in_use()))


def encrypt(plaintext):
    return _keys().encrypt(plaintext.encode()).decode()


def decrypt(token):
    """The plaintext, or ``None`` when no accepted secret decrypts ``token``."""
    try:
        return _keys().decrypt(token.encode()).decode()
    except (InvalidToken, ValueError):
        return None


def reencrypt(token):
    """``token`` under the current secret (``InvalidToken`` when no accepted secret opens it)."""
    return _keys().rotate(token.encode()).decode()


def _code_hash(secret, code):
    key = hashlib.sha256(b"authservice two-factor code|" + secret.encode()).digest()
    return hmac.new(key, code.encode(), hashlib.sha256).hexdigest()


def code_hash(code):
    """A keyed hash of a backup or mailed code: a stolen table gives nothing to try offline.

    Keyed with the current secret; :func:`code_hashes` also accepts the fallbacks.
    """
    return _code_hash(app_settings.secret(), code)


def code_hashes(code):
    """``code``'s hash under every secret in use, current first: a code stored before a rotation keeps
    working while its secret is a fallback. One HMAC per secret, whatever matches (no timing tell)."""
    return [_code_hash(secret, code) for secret in secrets_in_use()]
