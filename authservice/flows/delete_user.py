"""Deleting one's own account: POST /delete-user and GET /delete-user/callback (core.md §4.15).

A deletion mail carries a single-use token kept as the verification row ``delete-account-<token>``
whose value is the user's id (§6.4, §7.2).
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from authservice import app_settings, hashers, links, signals, tokens, users
from authservice.adapter import get_adapter
from authservice.cookies import encode_component
from authservice.errors import DELETE_DISABLED_MESSAGE, APIError, codes
from authservice.flows import passwords, sessions
from authservice.models import Account, Session, Verification

USER_DELETED = "User deleted"
MAIL_SENT = "Verification email sent"
IDENTIFIER_PREFIX = "delete-account-"


def _require_enabled():
    if not app_settings.delete_user.enabled:
        raise APIError(404, codes.NOT_FOUND, DELETE_DISABLED_MESSAGE)


def delete_user(ctx, found, *, password=None, token=None, callback_url=None):
    """The checks of §4.15 in their order; the answer's ``message``."""
    _require_enabled()
    user = found.user
    # Empty strings count as absent, as better-auth tests them for truthiness.
    if password:
        _check_password(user, password)
    if token:
        delete(ctx, user, token=token)
        return USER_DELETED
    if app_settings.delete_user.send_delete_verification:
        send_deletion_mail(ctx, user, callback_url)
        return MAIL_SENT
    if not password and not sessions.is_fresh(found.session):
        raise APIError(400, codes.SESSION_EXPIRED)
    delete(ctx, user)
    return USER_DELETED


def delete_by_link(ctx, token):
    """GET /delete-user/callback: the signed-in owner of ``token`` is deleted."""
    _require_enabled()
    found = sessions.get_session(ctx, bypass_cache=True)
    if found is None:
        raise APIError(404, codes.FAILED_TO_GET_USER_INFO)
    delete(ctx, found.user, token=token)


def _check_password(user, password):
    if not passwords.has_credential(user):
        raise APIError(400, codes.CREDENTIAL_ACCOUNT_NOT_FOUND)
    if not hashers.check_password(user, password):
        raise APIError(400, codes.INVALID_PASSWORD)


def send_deletion_mail(ctx, user, callback_url=None):
    token = tokens.random_string(32, tokens.LOWER_ALNUM)
    expires_in = app_settings.delete_user.delete_token_expires_in
    Verification.objects.create(
        identifier=IDENTIFIER_PREFIX + token, value=str(user.pk),
        expires_at=timezone.now() + timedelta(seconds=expires_in),
    )
    url = (f"{links.base(ctx)}/delete-user/callback?token={token}"
           f"&callbackURL={encode_component(callback_url or '/')}")
    address = users.email_of(user)
    get_adapter().send_mail("delete-account", address, {
        "user": user, "email": address, "token": token, "url": url,
    })
    return token


def _consume_token(user, token):
    """Use up ``token`` if it is ``user``'s and alive; else 404 INVALID_TOKEN.

    One DELETE decides it, so two concurrent uses cannot both succeed; a token of another user is
    left alone, so a guess by someone else cannot burn it.
    """
    used, _ = Verification.objects.filter(
        identifier=IDENTIFIER_PREFIX + token, value=str(user.pk), expires_at__gt=timezone.now(),
    ).delete()
    if not used:
        raise APIError(404, codes.INVALID_TOKEN)


def delete(ctx, user, token=None):
    """Remove ``user`` with its sessions, accounts and pending tokens; clear the caller's cookies.

    With ``token``, the deletion token is used up in the same transaction, so a failed deletion
    leaves it usable.
    """
    user_id, email = user.pk, users.email_of(user)
    with transaction.atomic():
        if token is not None:
            _consume_token(user, token)
        Session.objects.filter(user_id=user_id).delete()
        Account.objects.filter(user_id=user_id).delete()
        Verification.objects.filter(value=str(user_id)).delete()
        user.delete()
        # Receivers must never hear of a deletion that was rolled back.
        transaction.on_commit(lambda: signals.user_deleted.send(
            sender=type(user), user_id=user_id, email=email,
        ))
    sessions.clear_session_cookies(ctx)
