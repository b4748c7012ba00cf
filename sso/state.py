"""Pending SSO sign-ins: the state key and what the callback needs, in a Verification row (sso.md §1, §10.9).

The key is the OIDC ``state`` and the SAML ``RelayState``: 32 random characters, stored in the
database (never in process memory, [D8]) for 10 minutes and consumed by an atomic delete, so two
callbacks racing with the same state cannot both succeed.

The row's identifier is ``sso-state:<key>`` and :func:`consume` only ever looks under that prefix:
the Verification table is shared with other single-use rows (domain tokens ``_auth-token-…``, reset
tokens, OAuth states), and a bare key would let an anonymous callback consume (delete) one of those
by sending its identifier as ``state``/``RelayState`` (I9).
"""

import json
from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from authservice import tokens
from authservice.models import Verification

STATE_TTL = 600  # seconds the row lives (sso.md §1)
COOKIE_MAX_AGE = 300  # seconds the signed state cookie lives (sso.md §3)
STATE_LENGTH = 32
NAMESPACE = "sso-state:"


def row_identifier(key):
    """The Verification identifier of the state ``key``."""
    return NAMESPACE + key


class StateError(Exception):
    """A state that cannot be used; ``error_url`` is the state's own errorURL when it could be read."""

    def __init__(self, error, error_url=None):
        super().__init__(error)
        self.error = error
        self.error_url = error_url


@dataclass
class PendingSignIn:
    key: str
    callback_url: str
    error_url: str | None
    new_user_url: str | None
    request_sign_up: bool
    provider_ref: dict
    expires_at: int  # epoch milliseconds, as better-auth stores it
    code_verifier: str | None = None
    nonce: str | None = None
    scopes: list = field(default_factory=list)

    def to_json(self):
        return json.dumps({
            "callbackURL": self.callback_url, "errorURL": self.error_url, "newUserURL": self.new_user_url,
            "requestSignUp": self.request_sign_up, "codeVerifier": self.code_verifier, "nonce": self.nonce,
            "scopes": self.scopes, "expiresAt": self.expires_at, "providerRef": self.provider_ref,
        }, separators=(",", ":"))

    @classmethod
    def from_json(cls, key, text):
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("callbackURL"), str):
            raise ValueError("not a sign-in state")
        return cls(
            key=key, callback_url=data["callbackURL"], error_url=data.get("errorURL"),
            new_user_url=data.get("newUserURL"), request_sign_up=bool(data.get("requestSignUp")),
            provider_ref=data.get("providerRef") or {}, expires_at=int(data.get("expiresAt") or 0),
            code_verifier=data.get("codeVerifier"), nonce=data.get("nonce"), scopes=data.get("scopes") or [],
        )

    @property
    def expired(self):
        return self.expires_at <= int(timezone.now().timestamp() * 1000)


def new_key():
    return tokens.random_string(STATE_LENGTH, tokens.URL_SAFE)


def store(provider, *, callback_url, error_url=None, new_user_url=None, request_sign_up=False,
          code_verifier=None, nonce=None, scopes=()):
    """A fresh state for a sign-in at ``provider``; returns the PendingSignIn (``.key`` is the state)."""
    expires = timezone.now() + timedelta(seconds=STATE_TTL)
    pending = PendingSignIn(
        key=new_key(), callback_url=callback_url, error_url=error_url or None,
        new_user_url=new_user_url or None, request_sign_up=bool(request_sign_up),
        provider_ref=provider.provider_ref(), expires_at=int(expires.timestamp() * 1000),
        code_verifier=code_verifier, nonce=nonce, scopes=list(scopes),
    )
    Verification.objects.create(identifier=row_identifier(pending.key), value=pending.to_json(),
                                expires_at=expires)
    return pending


def consume(key):
    """The PendingSignIn of ``key``, deleted on the way: a second use finds nothing.

    Raises StateError("state_mismatch") for an unknown or already used key and
    StateError("state_invalid") for a row that cannot be read or has expired.
    """
    if not isinstance(key, str) or len(key) != STATE_LENGTH:
        raise StateError("state_mismatch")
    row = Verification.objects.find(row_identifier(key))
    if row is None:
        raise StateError("state_mismatch")
    if not row.claim():  # another request consumed it between our read and our delete
        raise StateError("state_mismatch")
    try:
        pending = PendingSignIn.from_json(key, row.value)
    except (ValueError, TypeError):
        raise StateError("state_invalid") from None
    if pending.expired or row.expires_at <= timezone.now():
        raise StateError("state_invalid", pending.error_url)
    return pending

