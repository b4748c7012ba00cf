"""A Django password hasher for better-auth's scrypt hashes [D6].

better-auth stores ``<salt hex>:<key hex>``: scrypt (N=16384, r=16, p=1, dkLen=64) over the
NFKC-normalised password, with the 32 hex *characters* of the salt as the scrypt salt. We store such
a hash as ``better_auth_scrypt$<salt hex>$<key hex>`` so Django can pick this hasher; new passwords
use the project's first hasher (argon2id), and Django re-hashes an imported one after the next
successful sign-in because this hasher is not the preferred one.

Sign-in costs the same whatever the stored hash (I7, :func:`check_password_evenly`): each attempt runs
exactly one verification with *every* hasher in ``PASSWORD_HASHERS``: the stored hash's own hasher
for real, every other one over a throw-away hash, and an unknown address all of them over throw-away
hashes. So an imported better-auth user (scrypt), a legacy PBKDF2 user, an argon2 user and an unknown
address all cost argon2 + scrypt + ... alike. We chose this over wrapping legacy hashes in argon2
(Django's "password upgrading without requiring a login"): a wrapped hash still has to run the legacy
derivation before the argon2 check, so the burn would have to run it too and a native argon2 user
would then be the odd one out; equal cost needs the union of the work either way, and this way needs
no data migration. The price: a sign-in costs the sum of the hashers *in use*: the preferred one,
and each other configured hasher that at least one stored hash uses (:func:`hashers_in_use`, asked of
the database at most every five minutes per process; a property of the whole table, so it is the same
for every address). Once the last imported user has signed in (and been re-hashed to argon2), sign-in
costs one argon2 again. Residual
differences: a stored hash with older parameters than the hasher's current ones (Django pads PBKDF2's
iterations with ``harden_runtime``, argon2's does nothing), and the re-hash after a *correct* password.
"""

import functools
import hashlib
import re
import secrets
import time
import unicodedata

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import (
    BasePasswordHasher,
    get_hashers,
    identify_hasher,
    mask_hash,
)
from django.contrib.auth.hashers import check_password as django_check_password
from django.core.signals import setting_changed
from django.dispatch import receiver
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


@functools.cache
def _throwaway_hash(hasher_class):
    """One hash per hasher class of a random password, made once: verifying against it costs what
    verifying a real hash of that hasher costs, and never matches."""
    hasher = hasher_class()
    return hasher.encode(secrets.token_urlsafe(24), hasher.salt())


def _stored_algorithm(encoded):
    try:
        return identify_hasher(encoded).algorithm
    except ValueError:  # unusable, empty or from a hasher that is not configured: no real work
        return None


# Which configured hashers some stored hash uses, per process: {PASSWORD_HASHERS tuple: (expiry, algorithms)}.
# The answer is about the whole table, never about one address, so every attempt pays the same.
_IN_USE = {}
IN_USE_TTL = 300  # seconds; a newly imported legacy hash is paid for within this time


def hashers_in_use():
    """The configured hashers an attempt must pay for: the preferred one, and every other one that at
    least one stored hash uses (a query per hasher, at most every ``IN_USE_TTL`` seconds)."""
    hashers = get_hashers()
    key = tuple(type(hasher) for hasher in hashers)
    now = time.monotonic()
    cached = _IN_USE.get(key)
    if cached is not None and cached[0] > now:
        return cached[1]
    users = get_user_model().objects
    in_use = [hashers[0]]
    for hasher in hashers[1:]:
        stored = users.filter(password__startswith=f"{hasher.algorithm}$")
        if hasher.algorithm == ALGORITHM:  # better-auth's raw "salt:key", as imported
            stored = stored | users.filter(password__regex=r"^[0-9a-f]{32}:")
        if stored.exists():
            in_use.append(hasher)
    _IN_USE[key] = (now + IN_USE_TTL, in_use)
    return in_use


@receiver(setting_changed)
def _forget_hashers_in_use(*, setting, **kwargs):
    if setting == "PASSWORD_HASHERS":
        _IN_USE.clear()


def _pay_current_parameters(encoded):
    """A hash made with weaker parameters than its hasher's current ones (older Django, fewer PBKDF2
    iterations, smaller argon2 memory) costs less to check: pay the difference, so its account does not
    show in the timing (second attack pass on issue 12: 4 ms against 110 ms for a weak argon2 hash).
    PBKDF2 pads exactly (``harden_runtime``, which Django runs itself only for the preferred hasher);
    the others have no padding, so they also check a throw-away hash at the current parameters,
    leaving the weak hash's own few milliseconds."""
    hasher = identify_hasher(encoded)
    if not hasher.must_update(encoded):
        return
    if hasattr(hasher, "iterations"):
        if hasher.algorithm != get_hashers()[0].algorithm:
            hasher.harden_runtime("", encoded)
    else:
        hasher.verify("", _throwaway_hash(type(hasher)))


def check_password(user, raw_password):
    """``user.check_password``, for any user model: a hash copied as-is from a better-auth database
    (``salt:key``) is read too, and re-hashed on success.

    The re-hash is written only over the hash that was checked (``UPDATE ... WHERE password = <it>``),
    never blindly as Django's own setter saves: a reset that committed between the read and the check
    would otherwise be overwritten by the old password's re-hash, bringing it back (attack 17d). Callers
    that then act on the check compare the stored hash under ``users.lock`` with ``user.password``.
    """
    stored = user.password
    user.password = normalize_imported(stored)

    def upgrade(raw):
        user.set_password(raw)
        user._password = None  # a re-hash is no password change (password_changes.py)
        type(user)._default_manager.filter(pk=user.pk, password=stored).update(password=user.password)

    return django_check_password(raw_password, user.password, upgrade)


def check_password_evenly(user, password):
    """``user.check_password(password)`` (False for ``None``) plus one throw-away verification with
    every other hasher in use, so the attempt costs the same for every stored hash and for an
    unknown address (see the module docstring)."""
    used = None
    correct = False
    if user is not None:
        encoded = normalize_imported(user.password)
        used = _stored_algorithm(encoded)
        correct = check_password(user, password) if used is not None else False
        if used is not None and not correct:
            _pay_current_parameters(encoded)
    for hasher in hashers_in_use():
        if hasher.algorithm != used:
            hasher.verify(password, _throwaway_hash(type(hasher)))
    return correct
