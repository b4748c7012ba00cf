"""Password reset: request a link, follow it, set the new password (core.md §4.9-§4.11, §7.2).

A reset token is 24 characters of ``[A-Za-z0-9]`` stored as the verification row
``reset-password:<token>`` whose value is the user id. Following the link (GET) does not use it up;
``POST /reset-password`` consumes it with one DELETE whose row count says who won, so two requests
(or two server processes) can never both use one token.
"""

import re
from datetime import timedelta
from urllib.parse import urljoin

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.utils import timezone

from authservice import app_settings, links, mail, signals, tokens
from authservice.adapter import get_adapter
from authservice.cookies import encode_component
from authservice.errors import APIError, codes
from authservice.flows import passwords, sessions
from authservice.models import Verification

TOKEN_LENGTH = 24
# Anything else cannot be a token of ours; it is not worth a query (and NUL would upset PostgreSQL).
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{1,128}")
IDENTIFIER_PREFIX = "reset-password:"
MESSAGE = "If this email exists in our system, check your email for the reset link"


def _identifier(token):
    return IDENTIFIER_PREFIX + token


def reset_url(ctx, token, redirect_to=None):
    return f"{links.base(ctx)}/reset-password/{token}?callbackURL={encode_component(redirect_to or '')}"


# --- POST /request-password-reset, POST /forget-password ----------------------------------------
def request_reset(ctx, email, redirect_to=None):
    """Mail a reset link to a known, active user; the same answer for every address."""
    if not app_settings.email_and_password.reset_password_enabled:
        raise APIError(400, codes.RESET_PASSWORD_DISABLED)
    user = get_user_model().objects.filter(email=email.lower(), is_active=True).first()
    token = tokens.random_string(TOKEN_LENGTH)
    url = reset_url(ctx, token, redirect_to)
    if user is None:
        _comparable_work(token, email, url)
        return {"status": True, "message": MESSAGE}
    expires_in = app_settings.email_and_password.reset_password_token_expires_in
    Verification.objects.create(
        identifier=_identifier(token), value=str(user.pk),
        expires_at=timezone.now() + timedelta(seconds=expires_in),
    )
    get_adapter().send_mail("reset-password", user.email, {
        "user": user, "email": user.email, "token": token, "url": url,
    })
    return {"status": True, "message": MESSAGE}


def _comparable_work(token, email, url):
    """What a known address costs, minus the write and the send: a lookup and a rendered mail."""
    Verification.objects.filter(identifier=_identifier(token)).exists()
    mail.render("reset-password", {"user": None, "email": email, "token": token, "url": url})


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
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise APIError(400, codes.USER_NOT_FOUND)
    hashed = make_password(new_password)
    with transaction.atomic():
        passwords.store_password(user, hashed)
    if app_settings.email_and_password.revoke_sessions_on_password_reset:
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

