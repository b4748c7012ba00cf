"""Password policy and hashing helpers shared by sign-up, reset and change (core.md §9)."""

from django.contrib.auth.hashers import make_password
from django.db import transaction

from authservice import app_settings, hashers, signals, users
from authservice.cookies import DONT_REMEMBER
from authservice.errors import APIError, codes
from authservice.flows import sessions
from authservice.models import Account, Verification

# Reset tokens are verification rows ``reset-password:<token>`` whose value is the user id
# (authservice.flows.password_reset).
RESET_TOKEN_PREFIX = "reset-password:"


def js_length(value):
    """Length as JavaScript counts it (UTF-16 code units), so limits match better-auth's."""
    return len(value.encode("utf-16-le")) // 2


def check_length(password):
    length = js_length(password)
    if length < app_settings.email_and_password.min_password_length:
        raise APIError(400, codes.PASSWORD_TOO_SHORT)
    if length > app_settings.email_and_password.max_password_length:
        raise APIError(400, codes.PASSWORD_TOO_LONG)


def burn_hash(password):
    """Hash for nothing, so an unknown user costs as much time as a known one (Django #20760)."""
    make_password(password)


# --- the credential: stored, changed, verified (core.md §4.11, §4.12, §4.18) -------------------
def has_credential(user):
    """A usable password and the credential account that better-auth keeps it on.

    A project's own user model (not an AbstractAuthUser) has passwords that the project sets itself
    (``createsuperuser``, its forms, users from before authservice): there the usable password is the
    credential, and its account row is added on the first sign-in (:func:`ensure_credential_account`).
    """
    if not user.has_usable_password():
        return False
    return not users.layout().own or Account.objects.filter(user=user, provider_id=Account.CREDENTIAL).exists()


def ensure_credential_account(user):
    """After a password sign-in on a project's own model: the account row better-auth lists."""
    if not users.layout().own:
        Account.objects.get_or_create(provider_id=Account.CREDENTIAL, account_id=str(user.pk),
                                      defaults={"user": user})


def store_password(user, hashed):
    """Save an already hashed password; the credential account is created if the user had none.

    Every reset link still outstanding dies with the old password: one mailed before a reset or a
    change must not set the password again (whoever read that mail may no longer be the owner).
    """
    users.update(user, password=hashed)
    Account.objects.get_or_create(provider_id=Account.CREDENTIAL, account_id=user.pk,
                                  defaults={"user": user})
    forget_what_the_old_password_opened(user)


def forget_what_the_old_password_opened(user):
    """A new password ends what the old one opened: outstanding reset links, trusted devices and
    pending 2FA sign-ins. The factors themselves stay: a reset proves the mailbox, not the second factor.

    Ours (:func:`store_password`) and every other change of the password (Django's admin,
    ``changepassword``, ``set_password()`` + ``save()``: ``password_changes.py``) come here.
    """
    revoke_reset_tokens(user)
    from authservice.two_factor import challenge, devices  # noqa: PLC0415 - two_factor imports flows

    devices.revoke_all(user)
    challenge.forget_user(user)


def revoke_reset_tokens(user):
    """End every outstanding reset link of ``user``: on a new password, and on a new address.

    Every path that changes a user's address calls this (change-e-mail links and flow (a), the
    admin); code of a project that changes ``user.email`` itself should too.
    """
    Verification.objects.filter(identifier__startswith=RESET_TOKEN_PREFIX, value=str(user.pk)).delete()


def verify(user, password):
    """``POST /verify-password``: 400 INVALID_PASSWORD unless ``password`` is the user's."""
    if not has_credential(user):
        burn_hash(password)
        raise APIError(400, codes.INVALID_PASSWORD)
    if not hashers.check_password(user, password):
        raise APIError(400, codes.INVALID_PASSWORD)


def change(ctx, found, *, current_password, new_password, revoke_other_sessions=False):
    """``POST /change-password`` for the session ``found``; the new session when all were revoked."""
    user = found.user
    check_length(new_password)
    if not has_credential(user):
        raise APIError(400, codes.CREDENTIAL_ACCOUNT_NOT_FOUND)
    checked = user.password  # as stored, before a re-hash on success
    if not hashers.check_password(user, current_password):
        raise APIError(400, codes.INVALID_PASSWORD)
    hashed = make_password(new_password)
    with transaction.atomic():
        # The password checked must still be the account's when the new one is written: a reset that
        # committed meanwhile (the owner taking the account back from this session's thief) wins (17d).
        if users.lock(user) not in (checked, user.password):
            raise APIError(400, codes.INVALID_PASSWORD)
        store_password(user, hashed)
    signals.password_changed.send(sender=type(user), user=user)
    if not revoke_other_sessions:
        return None
    # better-auth revokes every session, the caller's too, then signs the caller in afresh. The
    # passkeys those sessions registered go with them: one registered with a stolen cookie would
    # otherwise outlive the revocation meant to end the theft (passkey/retirement.py).
    from authservice.passkey import retirement  # noqa: PLC0415 - the passkey package imports flows

    with transaction.atomic():
        retirement.registered_from_sessions(user)
        sessions.revoke(user)
    remember = ctx.signed_cookie(DONT_REMEMBER) != "true"
    # The new session continues the caller's: how and when they signed in (it is no fresher).
    return sessions.replace_session(ctx, found, remember)
