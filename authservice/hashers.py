"""A Django password hasher for better-auth's scrypt hashes [D6].

better-auth stores ``<salt hex>:<key hex>``: scrypt (N=16384, r=16, p=1, dkLen=64) over the
NFKC-normalised password, with the 32 hex *characters* of the salt as the scrypt salt. We store such
a hash as ``better_auth_scrypt$<salt hex>$<key hex>`` so Django can pick this hasher; new passwords
use the project's first hasher (argon2id), and Django re-hashes an imported one after the next
successful sign-in because this hasher is not the preferred one.
"""

import hashlib
import re
import secrets
import unicodedata

from django.contrib.auth.hashers import BasePasswordHasher, mask_hash
from django.utils.crypto import constant_time_compare

ALGORITHM = "better_auth_scrypt"
_IMPORTED = re.compile(r"[0-9a-f]{32}:[0-9a-f]{128}")
# JavaScript's UTF-8 encoder turns a lone UTF-16 surrogate (a legal JSON escape) into U+FFFD; Python
# refuses to encode one at all.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def normalize_imported(encoded):
    """A raw better-auth hash (``salt:key``) in our stored form; anything else unchanged."""
    if encoded and _IMPORTED.fullmatch(encoded):
        salt, key = encoded.split(":")
        return f"{ALGORITHM}${salt}${key}"
    return encoded


def _scrypt(password, salt):
    normalized = _LONE_SURROGATE.sub("\ufffd", unicodedata.normalize("NFKC", password))
    return hashlib.scrypt(
        normalized.encode(),
        salt=salt.encode(),
        n=16384,
        r=16,
        p=1,
        dklen=64,
        maxmem=64 * 1024 * 1024,
    ).hex()


class BetterAuthScryptPasswordHasher(BasePasswordHasher):
    algorithm = ALGORITHM

    def salt(self):
        return secrets.token_hex(16)

    def encode(self, password, salt):
        return f"{self.algorithm}${salt}${_scrypt(password, salt)}"

    def decode(self, encoded):
        algorithm, salt, key = encoded.split("$", 2)
        assert algorithm == self.algorithm
        return {"algorithm": algorithm, "salt": salt, "hash": key}

    def verify(self, password, encoded):
        decoded = self.decode(encoded)
        return constant_time_compare(_scrypt(password, decoded["salt"]), decoded["hash"])

    def safe_summary(self, encoded):
        decoded = self.decode(encoded)
        return {"algorithm": decoded["algorithm"], "salt": mask_hash(decoded["salt"]),
                "hash": mask_hash(decoded["hash"])}

    def harden_runtime(self, password, encoded):
        pass
