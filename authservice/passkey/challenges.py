"""The challenge of one ceremony: stored server-side, named by a random id in a signed cookie.

As better-auth does: the options endpoint stores ``{type, expectedChallenge, userData}`` in a
verification row under a random id and sets ``{prefix}.better-auth-passkey`` to that id, signed. The
verify endpoint finds the row through the cookie only, so a challenge is finished by the browser that
asked for it and by no other (I9), and claims the row (one DELETE), so it is finished once, across
processes, even by two concurrent requests of that browser (I9).
"""

import json
from datetime import timedelta

from django.utils import timezone

from authservice import tokens
from authservice.cookies import signed_value
from authservice.errors import APIError
from authservice.models import Verification
from authservice.passkey import errors
from authservice.passkey.settings import options

COOKIE = "better-auth-passkey"
PREFIX = "passkey-challenge:"
REGISTRATION = "registration"
AUTHENTICATION = "authentication"


def store(ctx, ceremony, challenge, user_data, context=None):
    """Remember ``challenge`` for this browser; ``challenge`` is the base64url string sent out."""
    max_age = options().challenge_max_age
    key = tokens.random_string(32)
    value = {"type": ceremony, "expectedChallenge": challenge, "userData": user_data}
    if ceremony == REGISTRATION:
        value["context"] = context
    Verification.objects.create(identifier=PREFIX + key, value=json.dumps(value),
                                expires_at=timezone.now() + timedelta(seconds=max_age))
    ctx.set_cookie(COOKIE, signed_value(key), max_age=max_age)


def consume(ctx, ceremony):
    """The stored data of this browser's pending ``ceremony``; raises 400 CHALLENGE_NOT_FOUND when there is
    none, it expired, it was used, or it belongs to the other ceremony."""
    key = ctx.signed_cookie(COOKIE)
    if not key:
        raise APIError(400, errors.CHALLENGE_NOT_FOUND)
    ctx.delete_cookie(COOKIE)
    row = Verification.objects.find(PREFIX + key)
    if row is None or not row.claim() or row.expires_at <= timezone.now():
        raise APIError(400, errors.CHALLENGE_NOT_FOUND)
    try:
        data = json.loads(row.value)
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("type") != ceremony or not isinstance(
            data.get("expectedChallenge"), str):
        raise APIError(400, errors.CHALLENGE_NOT_FOUND)
    return data
