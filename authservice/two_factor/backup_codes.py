"""Backup codes: better-auth's shape (``xxxxx-xxxxx``), each stored as a keyed hash in its own row."""

import string

from django.db import transaction

from authservice import app_settings, tokens
from authservice.models import BackupCode
from authservice.two_factor.crypto import code_hash, code_hashes

_ALPHABET = string.ascii_letters + string.digits


def replace(user):
    """New codes for ``user`` (the old ones stop working); returns them in clear, shown once."""
    options = app_settings.two_factor.backup_codes
    codes = []
    for _ in range(options.amount):
        raw = tokens.random_string(options.length, _ALPHABET)
        codes.append(f"{raw[:5]}-{raw[5:]}")
    with transaction.atomic():
        BackupCode.objects.filter(user=user).delete()
        BackupCode.objects.bulk_create([BackupCode(user=user, code_hash=code_hash(code)) for code in codes])
    return codes


def has_any(user):
    return BackupCode.objects.filter(user=user).exists()


def consume(user, code):
    """Use ``code`` up; ``True`` only for the one request whose DELETE removed it."""
    if not isinstance(code, str) or not code or len(code) > 64:
        return False
    # Under every secret in use (a rotation's fallbacks too): one DELETE, still single use.
    deleted, _ = BackupCode.objects.filter(user=user, code_hash__in=code_hashes(code.strip())).delete()
    return deleted > 0
