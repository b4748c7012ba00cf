"""Proof of the e-mail address, and what it retires: the defence against pre-hijacked accounts (I1).

Anyone can sign up with an address they do not hold (Sudhodanan & Paverd, "Pre-hijacked accounts",
USENIX Security 2022). Until the mailbox's owner proves the address, whatever was set up on the account
may be a pre-hijacker's: the password chosen at sign-up, a session kept open, a social or SSO identity
linked by hand (``allow_different_emails``). So the moment control of the address is proven is recorded
(``emailVerifiedAt``, :func:`authservice.users.email_verified_at_of`), and the rule is:

**At the first proof of the address, every way into the account that was set up before it, by someone
who has not shown they are the prover, is retired:**

- every session except the prover's own;
- every social or SSO link created before the proof, except the identity that makes the proof, unless
  the proof is made in a session of the account (its holder is inside already and holds the mailbox);
- the password, unless the prover holds it;
- the passkeys registered before it (:mod:`authservice.passkey.retirement`): all of them when the proof
  is made outside a session of the account, else those registered from the sessions it ends;
- the second factor (TOTP, backup codes, trusted devices, pending two-factor sign-ins) with the password
  it guards: when a proof made outside a session of the account replaces or retires that password (a
  reset, a provider's identity), never when :func:`linked_by_address` retires an unconfirmed one later
  (the sign-in goes on to ask for the factor). The pre-hijacker's factor would lock the owner out of the account the reset gave back. A link followed
  elsewhere keeps the password, unconfirmed, and so the factor, and opens no session for a user with
  2FA: retiring the factor there would hand the mailbox alone a way past it, and take nothing from a
  pre-hijacker who still holds the password.

The proofs, and who the prover is:

=========================================  =======================================================
a verification or change-e-mail link       the mailbox. Followed in a browser signed in to this
                                           account, the prover also holds that session's way in:
                                           the password is confirmed. Followed anywhere else, the
                                           password is kept but stays *unconfirmed* (below).
a password reset by mailed link            the mailbox; the new password is the prover's.
a provider's identity linked by address    a trusted social provider or verified SSO domain, or a
(implicit linking at sign-in)              provider's verified e-mail: that identity. The password,
                                           set by someone else, is retired.
an identity linked earlier whose provider  that identity, brought in from a session of the account
now verifies the address                   (link-social): the account's holder, whose password is
                                           confirmed.
=========================================  =======================================================

An *unconfirmed* password is one set before the proof and never confirmed by the prover (the
credential account's ``updated_at`` is older than the proof; only a reset and a link followed in a
signed-in browser refresh it, never change-password, which the pre-hijacker could call with the
password they chose). It is retired when a provider's identity is later linked to the account by its
address, and replaced when the owner resets it: the pre-hijacker who had the victim click the
verification mail must not keep a password into the account the victim then signs in to. What it
opened goes with it: every session, the pending two-factor sign-ins, and the passkeys registered and
identities linked (link-social) since the proof; which session set up what is not known once that
session has ended, so everything set up while the password was unconfirmed goes.

Every retirement here takes the user's row lock first (:func:`authservice.users.lock`), as a password
sign-in does before writing its session and a passkey registration before writing its passkey: a way
in written on the strength of a check made before the proof is either retired by it or refused.

Proof is of an address: moving the account to a new address (change-e-mail) leaves it unproven, and
following the link is the first proof of it. Otherwise an account's holder could move it onto someone
else's address and, once that person followed the mail, keep a password or a provider in it.

What the owner may lose (docs/security.md): following a link on another device than the signed-in one
ends the other sessions and drops the providers linked before; a password left unconfirmed so is
retired when a provider is later linked by address, and the passkeys and providers added while it was
unconfirmed go with it or with a reset. A retired password is an unusable one; the reset mail brings it
back.
"""

from django.db import transaction
from django.utils import timezone

from authservice import signals, users
from authservice.flows import passwords, sessions
from authservice.models import Account
from authservice.passkey import retirement


def is_proven(user):
    """Whether control of ``user``'s address was ever proven: a proof time, or verified before we kept one
    (an account made verified by the admin, ``createsuperuser`` or an import)."""
    return users.email_verified_at_of(user) is not None or users.is_email_verified(user)


# What the proof says about the password set before it (``prove(password=...)``).
CONFIRM = "confirm"  # the prover holds it: a reset that just set it, a link followed while signed in
KEEP = "keep"  # unknown: a link followed elsewhere; the password stays, unconfirmed
RETIRE = "retire"  # someone else set it: the prover is a provider's identity


def prove(user, *, password, session=None, account=None):
    """Record that the prover controls ``user``'s address now; at the first proof, retire what the
    prover did not set up (module docstring). ``password`` is :data:`CONFIRM`, :data:`KEEP` or
    :data:`RETIRE`; ``session`` is the prover's session, if any; ``account`` the external identity
    making the proof.

    Returns whether this was the first proof.
    """
    with transaction.atomic():
        # First, so a sign-in or passkey registration in flight is either seen or sees the proof.
        users.lock(user)
        first = not is_proven(user)
        now = timezone.now()
        # A proof outside any session that replaces a password left unconfirmed by an earlier one.
        leftovers = not first and session is None and password == CONFIRM and _password_unconfirmed(user)
        if first:
            users.update(user, email_verified=True, email_verified_at=now)
        elif not users.is_email_verified(user):  # proven before, then moved to an unverified address
            users.update(user, email_verified=True)
        if leftovers:
            _retire_what_the_unconfirmed_password_opened(user, keep=account)
        if password == CONFIRM:
            _confirm_password(user, now)
        if first:
            if session is None:
                _retire_links(user, before=now, keep=account)
                retirement.registered_before(user)
                if password != KEEP:
                    _retire_second_factor(user)
            else:
                retirement.registered_from_sessions(user, keep_token=session.token)
            if password == RETIRE:
                _retire_password(user)
            sessions.revoke(user, keep_token=getattr(session, "token", None))
    return first


def linked_by_address(user, account):
    """A provider's identity was just linked to ``user`` by its address: an unconfirmed password (set
    before the proof, never confirmed by the prover) is retired, with everything it could have opened
    (:func:`_retire_what_the_unconfirmed_password_opened`).

    The second factor stays, and the sign-in that linked goes on to ask for it (external_identity): the
    address was proven before, so this identity proves nothing new, and retiring the factor here would let
    whoever holds the provider account (of a user who followed their verification link on another
    device) past it. A pre-hijacker's factor left so locks the owner out instead of letting anyone in:
    an operator's ``mfa_reset`` ends it (docs/security.md)."""
    with transaction.atomic():
        users.lock(user)
        if not _password_unconfirmed(user):
            return
        _retire_what_the_unconfirmed_password_opened(user, keep=account)
        _retire_password(user)


# --- what is retired -------------------------------------------------------------------------------
def _credential(user):
    return Account.objects.filter(user=user, provider_id=Account.CREDENTIAL)


def _confirm_password(user, now):
    """The prover holds the password: it counts as set at the proof (see :func:`_password_unconfirmed`)."""
    _credential(user).update(updated_at=now)


def _password_unconfirmed(user):
    proven_at = users.email_verified_at_of(user)
    if proven_at is None or not user.has_usable_password():
        return False
    # A password the project set itself, with no credential row (its own user model), is not ours to judge.
    return _credential(user).filter(updated_at__lt=proven_at).exists()


def _retire_password(user):
    """An unusable password, and what the old one opened (pending two-factor sign-ins, trusted devices,
    reset links) ends as it does on any change of it: ``set_unusable_password()`` is not one to Django."""
    if not user.has_usable_password():
        return
    user.set_unusable_password()
    users.update(user, password=user.password)
    _credential(user).delete()
    passwords.forget_what_the_old_password_opened(user)


def _retire_what_the_unconfirmed_password_opened(user, *, keep):
    """Every way in set up since the proof that left the password unconfirmed: sessions, passkeys, links
    made with link-social (except ``keep``, the identity proving now). Until the prover confirms or
    replaces that password it may be a pre-hijacker's, and whatever they built with it must go with it,
    not only the sessions. What the prover built meanwhile (from the session a verification link may
    open) goes too: which session built what is not known once it has ended."""
    since = users.email_verified_at_of(user)
    links = Account.objects.filter(user=user, created_at__gte=since).exclude(provider_id=Account.CREDENTIAL)
    if keep is not None:
        links = links.exclude(pk=keep.pk)
    links.delete()
    retirement.registered_since(user, since)
    sessions.revoke(user)


def _retire_second_factor(user):
    """A TOTP factor, backup codes, trusted devices and pending two-factor sign-ins set up before the
    proof: a pre-hijacker's second factor would lock the owner out of the account they just took back,
    or keep the pre-hijacker's trusted device skipping it. The owner enrols afresh."""
    from authservice.two_factor import reset  # noqa: PLC0415 - two_factor imports flows

    enabled = users.two_factor_enabled_of(user)
    reset.clear(user)
    if enabled:
        signals.two_factor_disabled.send(sender=type(user), user=user, reset_by="email-proof")


def _retire_links(user, *, before, keep):
    links = Account.objects.filter(user=user, created_at__lt=before).exclude(provider_id=Account.CREDENTIAL)
    if keep is not None:
        links = links.exclude(pk=keep.pk)
    links.delete()
