"""POST /change-email: pick one of three flows for the caller's state and settings (core.md §4.13).

(a) an unverified address may be replaced at once (``update_email_without_verification``);
(b) a verified address first approves the change from the old mailbox (``send_confirmation_to_old_email``);
(c) otherwise the new mailbox proves it is reachable before anything changes.
Links of (b) and (c) are applied by GET /verify-email.

A user with a second factor always takes (b), from a fresh session, whatever the settings say: their
mailbox resets the password, so moving it is as strong as turning the second factor off, and a stolen
(old) session must not do it without the current mailbox.
"""

from django.db import IntegrityError, transaction

from authservice import app_settings, signals, users
from authservice.errors import APIError, codes
from authservice.flows import passwords, sessions, verification
from authservice.two_factor import challenge as two_factor_challenge


def change_email(ctx, found, new_email, callback_url=None):
    """Start (or, in flow (a), finish) moving ``found.user`` to ``new_email``."""
    options = app_settings.change_email
    if not options.enabled:
        raise APIError(400, codes.CHANGE_EMAIL_DISABLED)
    user = found.user
    new_email = new_email.lower()
    if new_email == users.email_of(user):
        raise APIError(400, codes.EMAIL_IS_THE_SAME)
    second_factor = two_factor_challenge.required(user)
    if second_factor:
        sessions.require_fresh(found)
    can_mail = app_settings.email_verification.enabled
    verified = users.is_email_verified(user)
    update_at_once = not second_factor and not verified and options.update_email_without_verification
    confirm_on_old = can_mail and (second_factor or (verified and options.send_confirmation_to_old_email))
    # Decided before anything depends on the address: failing only for free ones would reveal taken ones.
    if not (update_at_once or confirm_on_old or can_mail):
        raise APIError(400, codes.VERIFICATION_EMAIL_NOT_ENABLED)
    if update_at_once:
        _update_now(ctx, found, new_email, callback_url, can_mail)
        return
    kind = "change-email-confirmation" if confirm_on_old else "change-email-verification"
    # Enqueued whether or not the new address is taken; the task mails only when it is free. So the
    # request does the same work either way and its time does not tell taken addresses (I7).
    verification.queue_verification_mail(
        ctx, email=users.email_of(user), user_id=user.pk, callback_url=callback_url, update_to=new_email,
        request_type=kind, kind=kind,
    )


def _update_now(ctx, found, new_email, callback_url, can_mail):
    """Flow (a). Whether the address moved shows in the session anyway; the answer stays the same."""
    user = found.user
    old_email = users.email_of(user)
    moved = False
    if not users.email_taken(new_email):
        try:
            with transaction.atomic():
                # Unproven, as every new address (flows/email_proof.py).
                users.update(user, email=new_email, email_verified_at=None)
                # Reset links mailed to the old address must not reset the account any more.
                passwords.revoke_reset_tokens(user)
            moved = True
        except IntegrityError:  # taken between the check and the write
            setattr(user, users.email_field(), old_email)
    sessions.set_session_cookie(ctx, found.session)
    if moved:
        signals.email_changed.send(sender=type(user), user=user, old_email=old_email, new_email=new_email)
    if can_mail:
        # For the new address only: when it was taken the account does not have it and nothing goes.
        verification.queue_verification_mail(ctx, email=new_email, user_id=user.pk,
                                             callback_url=callback_url)
