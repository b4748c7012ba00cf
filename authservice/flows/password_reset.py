"""Password reset: request a link, follow it, set the new password (core.md §4.9-§4.11, §7.2).

A reset token is 24 characters of ``[A-Za-z0-9]`` stored as the verification row
``reset-password:<token>`` whose value is the user id. Following the link (GET) does not use it up;
``POST /reset-password`` consumes it with one DELETE whose row count says who won, so two requests
(or two server processes) can never both use one token. Setting a password (this reset or a change)
deletes every other outstanding token of the user, and so does any change of the user's address
(change-e-mail links, flow (a), the admin): a link mailed to an address the account has left proves
nothing about whoever reads that mailbox now.

A reset proves the mailbox (it marks the address verified). At the first proof of an account's address
it also ends every session of it, whatever ``revoke_sessions_on_password_reset`` says, and drops the
social and SSO links made before it: they may be a pre-hijacker's, set up by someone who signed up with
the victim's address (I1, authservice/flows/email_proof.py).

The request for a link only enqueues a task (authservice.tasks); the task makes the token and mails
it when the address is an active user's, so the request does the same work for every address (I7).
"""

import re
import time
from datetime import datetime
from datetime import timezone as dt_timezone
from urllib.parse import urljoin

from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.utils import timezone

from authservice import app_settings, links, signals, tasks, tokens, users
from authservice.adapter import get_adapter
from authservice.cookies import encode_component
from authservice.errors import APIError, codes
from authservice.flows import email_proof, passwords, sessions
from authservice.models import Verification

TOKEN_LENGTH = 24
# Anything else cannot be a token of ours; it is not worth a query (and NUL would upset PostgreSQL).
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{1,128}")
IDENTIFIER_PREFIX = passwords.RESET_TOKEN_PREFIX
MESSAGE = "If this email exists in our system, check your email for the reset link"


def _identifier(token):
    return IDENTIFIER_PREFIX + token


def reset_url(base, token, redirect_to=None):
    return f"{base}/reset-password/{token}?callbackURL={encode_component(redirect_to or '')}"


# --- POST /request-password-reset, POST /forget-password ----------------------------------------
def request_reset(ctx, email, redirect_to=None):
    """Enqueue the reset mail; the same answer and the same work for every address (I7).

    Whether the address is a user's is decided by the task, in the worker: the request neither looks
    it up nor writes a token, it only enqueues, so its time says nothing about the account.
    """
    if not app_settings.email_and_password.reset_password_enabled:
        raise APIError(400, codes.RESET_PASSWORD_DISABLED)
    tasks.reset_password_mail.enqueue(email=email.lower(), base=links.base(ctx),
                                      callback_url=redirect_to, requested_at=time.time())
    return {"status": True, "message": MESSAGE}


def deliver(*, email, base, callback_url, requested_at):
    """The task's half: store a token and mail its link, for an active user only.

    The token lives ``reset_password_token_expires_in`` from the request, not from the run, so a
    queue that waited does not lengthen it; a request that expired in the queue, or that an account
    change overtook, mails nothing.
    """
    user = users.find_by_email(email)
    if user is None or not user.is_active:
        return
    if users.updated_at_of(user).timestamp() > requested_at:
        # The account changed after the request, a new password perhaps: a link made now would
        # outlive the change that ends every reset link. Asking again mails a fresh one.
        return
    expires_at = requested_at + app_settings.email_and_password.reset_password_token_expires_in
    if expires_at <= time.time():
        return
    token = tokens.random_string(TOKEN_LENGTH)
    Verification.objects.create(
        identifier=_identifier(token), value=str(user.pk),
        expires_at=datetime.fromtimestamp(expires_at, tz=dt_timezone.utc),
    )
    address = users.email_of(user)
    get_adapter().send_mail("reset-password", address, {
        "user": user, "email": address, "token": token,
        "url": reset_url(base, token, callback_url),
    })


# --- GET /reset-password/:token ------------------------------------------------------------------
def _live_row(token):
    """The newest unexpired row of ``token``; expired rows of it are purged on the way."""
    if not _TOKEN_SHAPE.fullmatch(token):
        return None
    now = timezone.now()
    rows = Verification.objects.filter(identifier=_identifier(token))
    rows.filter(expires_at__lte=now).delete()
    return rows.filter(expires_at__gt=now).order_by("-created_at").first()


def callback_location(ctx, token, callback_url):
    """Where the mailed link sends the browser: the app's page with ``token`` or ``error``."""
    if not callback_url:
        return f"{links.base(ctx)}/error?error={codes.INVALID_TOKEN}"
    # Resolved as JavaScript's ``new URL(callbackURL, base)`` does.
    target = urljoin(links.base(ctx), callback_url)
    if _live_row(token) is None:
        return links.set_param(target, "error", codes.INVALID_TOKEN)
    return links.set_param(target, "token", token)


# --- POST /reset-password ------------------------------------------------------------------------
def reset(ctx, token, new_password):
    """Set the password of the token's user and use the token up (core.md §4.11)."""
    if not token:
        raise APIError(400, codes.INVALID_TOKEN)
    passwords.check_length(new_password)
    user_id = _consume(token)
    user = users.find_by_pk(user_id)
    if user is None:
        raise APIError(400, codes.USER_NOT_FOUND)
    hashed = make_password(new_password)
    with transaction.atomic():
        # Also deletes every other outstanding reset token of the user.
        passwords.store_password(user, hashed)
        # The mailed link proves the mailbox, and the new password is the prover's. At the first
        # proof this ends every session and drops the links set up before it (flows/email_proof.py).
        first_proof = email_proof.prove(user, password=email_proof.CONFIRM)
    if app_settings.email_and_password.revoke_sessions_on_password_reset and not first_proof:
        sessions.revoke(user)
    signals.password_reset.send(sender=type(user), user=user)
    return {"status": True}


def _consume(token):
    """The user id of a live token, deleting its row; only the DELETE that removed it wins."""
    row = _live_row(token)
    if row is None:
        raise APIError(400, codes.INVALID_TOKEN)
    deleted, _ = Verification.objects.filter(pk=row.pk, expires_at__gt=timezone.now()).delete()
    if not deleted:
        raise APIError(400, codes.INVALID_TOKEN)
    return row.value

