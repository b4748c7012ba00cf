"""POST /change-email: pick one of three flows for the caller's state and settings (core.md §4.13).

(a) an unverified address may be replaced at once (``update_email_without_verification``);
(b) a verified address first approves the change from the old mailbox (``send_confirmation_to_old_email``);
(c) otherwise the new mailbox proves it is reachable before anything changes.
Links of (b) and (c) are applied by GET /verify-email.
"""

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from authservice import app_settings, signals
from authservice.errors import APIError, codes
from authservice.flows import passwords, sessions, verification


def change_email(ctx, found, new_email, callback_url=None):
    """Start (or, in flow (a), finish) moving ``found.user`` to ``new_email``."""
    options = app_settings.change_email
    if not options.enabled:
        raise APIError(400, codes.CHANGE_EMAIL_DISABLED)
    user = found.user
    new_email = new_email.lower()
    if new_email == user.email:
        raise APIError(400, codes.EMAIL_IS_THE_SAME)
    can_mail = app_settings.email_verification.enabled
    update_at_once = not user.email_verified and options.update_email_without_verification
    confirm_on_old = can_mail and user.email_verified and options.send_confirmation_to_old_email
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
        ctx, email=user.email, user_id=user.pk, callback_url=callback_url, update_to=new_email,
        request_type=kind, kind=kind,
    )


def _update_now(ctx, found, new_email, callback_url, can_mail):
    """Flow (a). Whether the address moved shows in the session anyway; the answer stays the same."""
    user = found.user
    old_email = user.email
    User = get_user_model()
    moved = False
    if not User.objects.filter(email=new_email).exists():
        user.email = new_email
        try:
            with transaction.atomic():
                user.save(update_fields=["email", "updated_at"])
                # Reset links mailed to the old address must not reset the account any more.
                passwords.revoke_reset_tokens(user)
            moved = True
        except IntegrityError:  # taken between the check and the write
            user.email = old_email
    sessions.set_session_cookie(ctx, found.session)
    if moved:
        signals.email_changed.send(sender=User, user=user, old_email=old_email, new_email=new_email)
    if can_mail:
        # For the new address only: when it was taken the account does not have it and nothing goes.
        verification.queue_verification_mail(ctx, email=new_email, user_id=user.pk,
                                             callback_url=callback_url)
