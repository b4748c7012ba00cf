"""Sending and following e-mail verification links, change-e-mail links included (core.md §4.7, §4.8).

Tokens are made and read by :mod:`authservice.flows.verification`; this module decides what a token
does. A token names its account by id (``sub``) and by the address it was mailed for (``email``), and
is honoured only while that account still has that address: otherwise ``USER_NOT_FOUND``, as
better-auth answers a link that was already applied. Never the account that holds the address now:
the address may have changed hands since (I1). A change-e-mail token also carries ``updateTo`` (the
new address), ``requestType`` and a stamp of the account's password and verification state; a stale
stamp answers ``INVALID_TOKEN``.
"""

from django.db import IntegrityError, transaction

from authservice import app_settings, links, signals, users
from authservice.api.context import Redirect
from authservice.errors import APIError, codes
from authservice.flows import email_proof, passwords, sessions, verification
from authservice.two_factor import challenge as two_factor_challenge

CONFIRMATION = "change-email-confirmation"
CHANGE_VERIFICATION = "change-email-verification"


def _token_user(payload):
    """The account the token was mailed for, while it still has the token's address (else 401)."""
    user_id = payload.get("sub")
    user = users.find_by_pk(user_id)
    if user is None or users.email_of(user).lower() != payload["email"] or not user.is_active:
        # An inactive account is treated as gone: its links change nothing and sign nobody in (I1).
        raise APIError(401, codes.USER_NOT_FOUND)
    if payload.get("updateTo") and not verification.stamp_matches(user, payload):
        # The password was reset or set, or the address verified, since the link was asked for:
        # whoever asked may not be the owner who proved the mailbox since.
        raise APIError(401, codes.INVALID_TOKEN)
    return user


def _require_enabled():
    if not app_settings.email_verification.enabled:
        raise APIError(400, codes.VERIFICATION_EMAIL_NOT_ENABLED)


# --- POST /send-verification-email --------------------------------------------------------------
def send(ctx, email, callback_url=None):
    """Mail a verification link; ``{"status": True}`` or an APIError (core.md §4.7).

    Without a session the request only enqueues the mail for ``email``; the task finds out whether
    an unverified, active account has it. Known and unknown addresses cost the request the same (I7).
    """
    _require_enabled()
    found = sessions.get_session(ctx)
    if found is None:
        verification.queue_verification_mail(ctx, email=email, callback_url=callback_url)
        return {"status": True}
    user = found.user
    if users.email_of(user).lower() != email.lower():
        raise APIError(400, codes.EMAIL_MISMATCH)
    if users.is_email_verified(user):
        raise APIError(400, codes.EMAIL_ALREADY_VERIFIED)
    verification.queue_verification_mail(ctx, email=users.email_of(user), user_id=user.pk,
                                         callback_url=callback_url)
    return {"status": True}


# --- GET /verify-email ---------------------------------------------------------------------------
def verify(ctx, token, callback_url=None):
    """Follow a verification link (core.md §4.8).

    Token and user errors answer 401 JSON, or with ``callback_url`` a 302 there with ``error=CODE``.
    One addition to better-auth: when a change-e-mail link would move the account onto an address
    that another account took meanwhile, the answer is 422
    ``USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL`` (redirected the same way), never a 500.
    """
    try:
        payload = verification.read_token(token)
        user = _token_user(payload)
        if payload.get("updateTo"):
            result = _apply_change(ctx, user, payload, callback_url)
        else:
            result = _verify_plain(ctx, user)
    except APIError as error:
        if callback_url and error.status_code in (401, 422):
            return Redirect(links.with_params(callback_url, error=error.code))
        raise
    return Redirect(callback_url) if callback_url else result


def _verify_plain(ctx, user):
    if users.is_email_verified(user):
        return {"status": True, "user": None}
    # The link proves the mailbox; followed in a browser signed in to this account, its holder is the
    # prover too, and keeps the password and that session (flows/email_proof.py, I1).
    found = sessions.get_session(ctx)
    own = found if found is not None and found.user.pk == user.pk else None
    email_proof.prove(user, session=own and own.session,
                      password=email_proof.CONFIRM if own else email_proof.KEEP)
    signals.email_verified.send(sender=type(user), user=user)
    if app_settings.email_verification.auto_sign_in_after_verification:
        _sign_in(ctx, user)
    return {"status": True, "user": None}


def _sign_in(ctx, user):
    """Keep the caller's session when it is already this user's; start one only in a browser that has
    none. A browser signed in as someone else stays so: a link is a GET any page can make a victim's
    browser open, and switching it to the link's account would be login CSRF (I9)."""
    found = sessions.get_session(ctx)
    if found is None:
        # A mailed link proves the mailbox only: a user with 2FA signs in with the second factor.
        if not two_factor_challenge.required(user):
            sessions.create_session(ctx, user, method="verification_link")
    elif found.user.pk == user.pk:
        sessions.set_session_cookie(ctx, found.session)


def _apply_change(ctx, user, payload, callback_url):
    found = sessions.get_session(ctx)
    if found is not None and found.user.pk != user.pk:
        raise APIError(401, codes.INVALID_USER)
    request_type = payload.get("requestType")
    new_email = payload["updateTo"]
    if request_type == CONFIRMATION:
        # The old address approved the move; now the new address must prove itself.
        verification.queue_verification_mail(
            ctx, email=users.email_of(user), user_id=user.pk, callback_url=callback_url, update_to=new_email,
            request_type=CHANGE_VERIFICATION, kind=CHANGE_VERIFICATION,
        )
        return {"status": True}
    verified = request_type == CHANGE_VERIFICATION
    old_email = users.email_of(user)
    with transaction.atomic():
        _move_address(user, new_email)
        if verified:
            # The first proof of the new address (flows/email_proof.py): followed outside the account's
            # session, whoever holds that mailbox may not be who asked for the move.
            email_proof.prove(user, session=found and found.session,
                              password=email_proof.CONFIRM if found else email_proof.KEEP)
    if found is None:
        if not two_factor_challenge.required(user):  # as in _sign_in: a link is no second factor
            sessions.create_session(ctx, user, method="verification_link")
    else:
        sessions.set_session_cookie(ctx, found.session)
    signals.email_changed.send(sender=type(user), user=user, old_email=old_email, new_email=new_email)
    if verified:
        signals.email_verified.send(sender=type(user), user=user)
    else:
        # Legacy link (no type): the new address still has to be verified with a plain link.
        verification.queue_verification_mail(ctx, email=users.email_of(user), user_id=user.pk,
                                             callback_url=callback_url)
    return {"status": True, "user": users.to_wire(user)}


def _move_address(user, new_email):
    """Onto ``new_email``, unproven: nothing about the new address is known until it is proven."""
    if users.email_taken(new_email, exclude=user):
        raise APIError(422, codes.USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL)
    try:
        with transaction.atomic():
            users.update(user, email=new_email, email_verified=False, email_verified_at=None)
            # Reset links mailed to the old address must not reset the account any more.
            passwords.revoke_reset_tokens(user)
    except IntegrityError:  # taken between the check and the write
        raise APIError(422, codes.USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL) from None
