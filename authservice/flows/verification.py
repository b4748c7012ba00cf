"""E-mail verification tokens and mails (core.md §4.7, §4.8, §7.2).

Tokens are stateless, signed with the app secret and carry their own expiry, so expired and forged
tokens are told apart (``TOKEN_EXPIRED`` vs ``INVALID_TOKEN``). Besides better-auth's ``email``,
``updateTo`` and ``requestType`` a token names its account by id (``sub``): an address changes hands
(a release, a deletion, a sign-up by its real owner), so a link must never apply to whoever holds the
address when it is clicked, only to the account it was mailed for while that account still has the
address (I1). A change-e-mail token also carries ``stamp``, a digest of the account's password,
verification state and last update, so a password reset (the owner proving the mailbox) or a
verification kills the change links an earlier holder of the account asked for, and applying one
link (which updates the account) kills its siblings and itself: change links are single-use (I9).
"""

import time

from django.core import signing
from django.utils.crypto import constant_time_compare, salted_hmac

from authservice import app_settings, links, tasks, users
from authservice.adapter import get_adapter
from authservice.cookies import encode_component
from authservice.errors import APIError, codes

SALT = "authservice.email-verification"


def account_stamp(user):
    """A digest of what a change-e-mail link must outlive unchanged: the password, the verification
    and the account's last update (``updated_at`` moves with every save through the model, the
    password and verification are checked too because bulk updates skip it).

    Not the password hash itself: the token's payload is signed, not encrypted.
    """
    updated_at = users.updated_at_of(user)
    updated = updated_at.isoformat() if updated_at else ""
    state = f"{user.pk}|{user.password}|{users.is_email_verified(user)}|{updated}"
    return salted_hmac(SALT + ".stamp", state, secret=app_settings.secret(), algorithm="sha256").hexdigest()[:32]


def stamp_matches(user, payload):
    return constant_time_compare(payload.get("stamp") or "", account_stamp(user))


def make_token(email, update_to=None, request_type=None, expires_in=None, user=None):
    """A signed link token for ``user`` at ``email``; ``user`` defaults to whoever has ``email`` now.

    Without an account the token names none, and following it answers ``USER_NOT_FOUND``.
    """
    email = email.lower()
    if user is None:
        user = users.find_by_email(email)
    payload = {"email": email, "exp": int(time.time()) + (
        expires_in or app_settings.email_verification.expires_in)}
    if user is not None:
        payload["sub"] = str(user.pk)
    if update_to:
        payload["updateTo"] = update_to.lower()
        if user is not None:
            payload["stamp"] = account_stamp(user)
    if request_type:
        payload["requestType"] = request_type
    return signing.dumps(payload, key=app_settings.secret(), salt=SALT)


def read_token(token):
    """The token's payload; raises 401 INVALID_TOKEN or TOKEN_EXPIRED."""
    try:
        payload = signing.loads(token, key=app_settings.secret(), salt=SALT)
    except signing.BadSignature:
        raise APIError(401, codes.INVALID_TOKEN) from None
    if not isinstance(payload, dict) or "email" not in payload or "exp" not in payload:
        raise APIError(401, codes.INVALID_TOKEN)
    if payload["exp"] < time.time():
        raise APIError(401, codes.TOKEN_EXPIRED)
    return payload


def verify_url(base, token, callback_url):
    """The mailed link; ``base`` is :func:`authservice.links.base` of the request that asked."""
    return f"{base}/verify-email?token={token}&callbackURL={encode_component(callback_url or '/')}"


def queue_verification_mail(ctx, *, email, user_id=None, callback_url=None, update_to=None,
                            request_type=None, kind="verify-email"):
    """Enqueue a verification (or change-e-mail) mail for the account that has ``email`` now.

    ``user_id`` pins the account; without it the account is looked up by ``email``. Callers enqueue
    whether or not such an account exists (the task decides), so the request costs the same (I7).
    """
    if not app_settings.email_verification.enabled:
        raise APIError(400, codes.VERIFICATION_EMAIL_NOT_ENABLED)
    tasks.verification_mail.enqueue(
        kind=kind, email=email.lower(), base=links.base(ctx), callback_url=callback_url,
        user_id=user_id, update_to=update_to and update_to.lower(), request_type=request_type,
    )


def deliver(*, kind, email, base, callback_url, user_id, update_to, request_type):
    """The task's half: mail only an active account that still has ``email`` (and needs the mail)."""
    user = users.find_by_pk(user_id) if user_id else users.find_by_email(email)
    if user is None or not user.is_active or users.email_of(user).lower() != email:
        return
    if kind == "verify-email" and users.is_email_verified(user):
        return
    if update_to and users.email_taken(update_to, exclude=user):
        # The new address is taken: the caller got the same answer, nobody gets a link.
        return
    token = make_token(users.email_of(user), update_to, request_type, user=user)
    to = update_to if (update_to and request_type != "change-email-confirmation") else users.email_of(user)
    get_adapter().send_mail(kind, to, {
        "user": user, "email": to, "new_email": update_to, "token": token,
        "url": verify_url(base, token, callback_url),
    })
