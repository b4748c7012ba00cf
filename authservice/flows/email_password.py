"""Sign-up and sign-in with e-mail and password (core.md §4.3, §4.4)."""

from django.contrib.auth.hashers import make_password
from django.db import IntegrityError, transaction

from authservice import additional_fields, app_settings, django_auth_signals, hashers, signals, user_ids, users
from authservice.api.inputs import is_email
from authservice.errors import APIError, codes
from authservice.flows import passwords, sessions, verification
from authservice.models import Account
from authservice.two_factor import challenge as two_factor_challenge


def _send_on_sign_up():
    configured = app_settings.email_verification.send_on_sign_up
    if configured is None:
        return app_settings.email_and_password.require_email_verification
    return configured


def _fake_user(email, name, image, password_hash, additional):
    """The made-up user of the no-session sign-up answer: built and rendered by the same code as a
    new account (``users.build``, ``users.to_wire``), so nothing but the id's freshness tells them apart."""
    new = users.build(email=email, name=name, image=image, password_hash=password_hash, additional=additional)
    return users.to_wire(users.made_up(new, user_ids.next_user_id()))


def sign_up(ctx, *, name, email, password, image=None, callback_url=None, remember=True, body=None):
    """``body`` is the validated request body: its declared additional fields are applied."""
    options = app_settings.email_and_password
    if not options.enabled or options.disable_sign_up:
        raise APIError(400, codes.EMAIL_PASSWORD_SIGN_UP_DISABLED)
    passwords.check_length(password)
    additional = additional_fields.parse_input(body or {}, "create") if additional_fields.declared() else {}
    email = email.lower()
    without_session = not options.auto_sign_in or options.require_email_verification
    # Hash before looking the address up, so both answers take the password hash's time.
    hashed = make_password(password)
    mails = _send_on_sign_up() and app_settings.email_verification.enabled
    try:
        # One transaction for a taken and a free address alike, holding the queued verification
        # mail: both cost the request one commit and one task (I7), and a new user's mail is queued
        # exactly when the user is stored.
        with transaction.atomic():
            if users.email_taken(email):
                if not without_session:
                    raise APIError(422, codes.USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL)
                fake = _fake_user(email, name, image, hashed, additional)
                if mails:
                    # For the made-up id, which the task finds no account for: nobody gets mail.
                    verification.queue_verification_mail(ctx, email=email, user_id=fake["id"],
                                                         callback_url=callback_url)
                return {"token": None, "user": fake}
            # With the credential account better-auth keeps the password on.
            user = users.create(email=email, name=name, image=image, password_hash=hashed,
                                additional=additional)
            session = None if without_session else sessions.create_session(
                ctx, user, remember, announce=False, method="sign_up")
            if mails:
                verification.queue_verification_mail(ctx, email=users.email_of(user), user_id=user.pk,
                                                     callback_url=callback_url)
    except IntegrityError:
        # The same address signed up concurrently: "exists" only when it now does. Any other
        # constraint (a value a column refuses) is a bug to surface, never an existence answer (I7).
        if not users.email_taken(email):
            raise
        raise APIError(422, codes.USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL) from None
    # After the block: a receiver that raises must not roll the new user back.
    signals.user_created.send(sender=type(user), user=user, provider=Account.CREDENTIAL)
    if session is not None:
        sessions.announce_sign_in(ctx, user, session)
    return {"token": session.token if session else None, "user": users.to_wire(user)}


def check_email_verified(ctx, user):
    """403 EMAIL_NOT_VERIFIED when ``require_email_verification`` is on and ``user``'s address is not.

    Every first-party sign-in (password, passkey, the second step of a two-factor one) calls this one
    check: an operator who turns the setting on shuts unproven accounts out by every way in, not by the
    password alone (I1). External identities have their own rule (flows/external_identity.py).
    """
    if app_settings.email_and_password.require_email_verification and not users.is_email_verified(user):
        if app_settings.email_verification.send_on_sign_in:
            verification.queue_verification_mail(ctx, email=users.email_of(user), user_id=user.pk)
        raise APIError(403, codes.EMAIL_NOT_VERIFIED)


def sign_in(ctx, *, email, password, remember=True):
    options = app_settings.email_and_password
    if not options.enabled:
        raise APIError(400, codes.EMAIL_PASSWORD_DISABLED)
    if not is_email(email):
        raise APIError(400, codes.INVALID_EMAIL)
    user = users.find_by_email(email)
    has_credential = (
        user is not None
        and user.is_active
        and passwords.has_credential(user)
    )
    checked = user.password if has_credential else None  # as stored, before a re-hash on success
    # Same answer and the same hashing work for an unknown address and a wrong password, whichever
    # hasher made the stored hash: no user enumeration, imported users included (I7).
    if not hashers.check_password_evenly(user if has_credential else None, password):
        django_auth_signals.login_failed(ctx, email.lower())
        raise APIError(401, codes.INVALID_EMAIL_OR_PASSWORD)
    check_email_verified(ctx, user)
    with transaction.atomic():
        # The password checked must still be the account's when the session is written: a reset or a
        # proof that replaced or retired it meanwhile has ended every session, and one written after
        # it would be opened by a password that no longer exists (I1). The lock orders the two.
        if users.lock(user) not in (checked, user.password):  # user.password: the re-hash, if any
            raise APIError(401, codes.INVALID_EMAIL_OR_PASSWORD)
        passwords.ensure_credential_account(user)
        # Checked before any session exists: a user with 2FA gets a pending sign-in, never a session.
        pending = two_factor_challenge.begin_sign_in(ctx, user, remember)
        if pending is not None:
            return pending, user
        session = sessions.create_session(ctx, user, remember, announce=False, method="password")
    # After the block: a receiver that raises must not roll the session back.
    sessions.announce_sign_in(ctx, user, session)
    return session, user
