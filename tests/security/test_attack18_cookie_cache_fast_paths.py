"""I1: the faster checks of the cache cookie and the signed token cookie decide exactly as the trusted ones.

Issue 18 made get-session's checks cheaper: the base64url alphabet test of ``session_data`` is a regular
expression instead of ``str.strip`` over the alphabet, and the HMACs go through ``hmac.digest`` instead of
``hmac.new(...).digest()``. The trusted versions are kept here, as they were, and both are run over hostile
inputs and over random mutations of valid cookies: every value either accepts, the other must too, with
the same result.
"""

import base64
import binascii
import hashlib
import hmac
import json
import random
import time

import pytest

from authservice import cookie_cache, tokens

SECRET = "fast-path-differential-secret-0123456789"
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


# --- the trusted versions, as they were before issue 18's changes ---------------------------------
def trusted_b64url_decode(text):
    if not text or text.strip(ALPHABET):
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def trusted_signature(data, expires_at, secret):
    signed = json.dumps({**data, "expiresAt": expires_at}, separators=(",", ":"), ensure_ascii=False,
                        allow_nan=False)
    digest = hmac.new(secret.encode(), signed.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def trusted_decode(value, secret):
    raw = trusted_b64url_decode(value)
    if raw is None:
        return None
    try:
        outer = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(outer, dict):
        return None
    data, expires_at, signature = outer.get("session"), outer.get("expiresAt"), outer.get("signature")
    number = isinstance(expires_at, (int, float)) and not isinstance(expires_at, bool)
    if not isinstance(data, dict) or not number or not isinstance(signature, str):
        return None
    try:
        expected = trusted_signature(data, expires_at, secret)
    except (ValueError, UnicodeEncodeError, RecursionError):
        return None
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        return None
    session, user = data.get("session"), data.get("user")
    if not isinstance(session, dict) or not isinstance(user, dict):
        return None
    updated_at = data.get("updatedAt")
    if not isinstance(session.get("token"), str) or not (
            isinstance(updated_at, (int, float)) and not isinstance(updated_at, bool)):
        return None
    if not isinstance(data.get("version", "1"), str):
        return None
    return data, expires_at


def trusted_unsign(signed, secret):
    value, dot, signature = signed.rpartition(".")
    if not dot or len(signature) != 44 or not signature.endswith("="):
        return None
    expected = base64.b64encode(hmac.new(secret.encode(), value.encode(), hashlib.sha256).digest()).decode()
    return value if hmac.compare_digest(expected.encode(), signature.encode()) else None


# --- inputs ---------------------------------------------------------------------------------------
def valid_value(name="Ada"):
    now = int(time.time() * 1000)
    session = {"id": "s" * 32, "token": "t" * 32, "userId": "u" * 32, "expiresAt": "2099-01-01T00:00:00.000Z",
               "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z",
               "ipAddress": "127.0.0.1", "userAgent": "ua"}
    user = {"id": "u" * 32, "name": name, "email": "ada@example.com", "emailVerified": False, "image": None}
    return cookie_cache.encode(session, user, expires_at=now + 300_000, updated_at=now, version="1",
                               secret=SECRET)


HOSTILE = ["", "=", "==", "A", "AA", "AAA", "AAAA", "AAAA=", "AA==", " AAAA", "AAAA ", "AA AA", "AA\nAA",
           "AA\x00AA", "AA+/AA", "AA.AA", "ÀÀÀÀ", "٣٣٣٣", "ＡＡＡＡ", "AA%3DAA", "-_-_", "____", "null",
           base64.urlsafe_b64encode(b"[]").decode(), base64.urlsafe_b64encode(b'{"session":1}').decode(),
           base64.urlsafe_b64encode(b'{"session":{},"expiresAt":NaN,"signature":"x"}').decode()]
NOISE = ALPHABET + "=+/ \t\n\r\x00.%;,\"'\\{}[]:" + "éÀ٣Ａ\u2028\ud800"


def mutations(value, rng, count):
    for _ in range(count):
        chars = list(value)
        for _ in range(rng.randrange(1, 4)):
            kind = rng.randrange(5)
            at = rng.randrange(len(chars) + 1)
            if kind == 0 and chars:
                chars[min(at, len(chars) - 1)] = rng.choice(NOISE)
            elif kind == 1:
                chars.insert(at, rng.choice(NOISE))
            elif kind == 2 and chars:
                del chars[min(at, len(chars) - 1)]
            elif kind == 3:
                chars = chars[:at]
            else:
                chars = chars[at:] + chars[:at]
        yield "".join(chars)


def outcome(function, *args):
    """What ``function`` answers, or the type of what it raises (a lone surrogate cannot be encoded)."""
    try:
        return function(*args)
    except Exception as error:  # noqa: BLE001 - compared, not hidden
        return type(error)


@pytest.mark.parametrize("text", HOSTILE + [valid_value()])
def test_hostile_values_decode_as_the_trusted_path_decodes_them(text):
    assert cookie_cache._b64url_decode(text) == trusted_b64url_decode(text)
    assert cookie_cache.decode(text, SECRET) == trusted_decode(text, SECRET)


def test_a_valid_value_decodes_on_both_paths():
    value = valid_value()
    assert cookie_cache.decode(value, SECRET) == trusted_decode(value, SECRET) is not None
    assert cookie_cache.decode(value, SECRET + "x") is None


def test_random_mutations_of_a_valid_cache_decide_as_the_trusted_path():
    rng = random.Random(18)
    for value in (valid_value(), valid_value("Zoë ✓")):
        for mutated in mutations(value, rng, 1500):
            assert cookie_cache._b64url_decode(mutated) == trusted_b64url_decode(mutated), mutated
            assert cookie_cache.decode(mutated, SECRET) == trusted_decode(mutated, SECRET), mutated


def test_random_mutations_of_a_signed_token_decide_as_the_trusted_path():
    rng = random.Random(18)
    signed = tokens.sign("t" * 32, SECRET)
    assert tokens.unsign(signed, SECRET) == trusted_unsign(signed, SECRET) == "t" * 32
    for mutated in mutations(signed, rng, 3000):
        assert outcome(tokens.unsign, mutated, SECRET) == outcome(trusted_unsign, mutated, SECRET), mutated
