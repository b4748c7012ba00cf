"""Passkeys that end with something else: the sessions they were registered from, or an unproven past.

A passkey outlives every session, so a session that should not have had the account (a stolen cookie,
a pre-hijacker's sign-up) could turn itself into a lasting credential. Two events retire such passkeys:

- a revocation that says "those sessions were not me": a password change that revokes the other
  sessions (better-auth ends the caller's too), the first proof of the address made in a signed-in
  browser. The passkeys registered from any session but the one it keeps go
  (:func:`registered_from_sessions`), whether that session is still live or not: a thief's session
  the owner signed out of, or that expired and was cleaned up, must not leave its passkey behind.
  A reset of a proven account is not one: it says "I forgot", and its owner's passkeys stay theirs;
- the first proof of the address made outside any session of the account: every passkey registered
  before it (:func:`registered_before`), as email_proof retires the social links made before it;
- the retirement of a password left unconfirmed by such a proof: the passkeys registered since the
  proof (:func:`registered_since`), while that password, perhaps a pre-hijacker's, was a way in.

Each takes the user's row lock (:func:`authservice.users.lock`) before it looks, as a registration does
before it writes (passkey/flows.py), so a registration in flight is either retired or refused.

Kept light (models and signals only): the password and proof flows import it, and the ceremonies'
module imports those flows.
"""

from django.db import transaction

from authservice import signals, users
from authservice.models import Passkey, Session


def registered_from_sessions(user, *, keep_token=None):
    """Retire ``user``'s passkeys registered from any session but ``keep_token``'s, ended ones included.
    Call it before the revocation: it reads which session is kept."""
    with transaction.atomic():
        users.lock(user)
        query = Passkey.objects.filter(user=user, created_by_session_id__isnull=False)
        if keep_token is not None:
            kept = Session.objects.filter(user=user, token=keep_token).values_list("id", flat=True).first()
            query = query.exclude(created_by_session_id=kept)
        return _remove(user, query)


def every_passkey(user):
    """An operator's MFA reset (admin action, ``manage.py mfa_reset``): the user starts again."""
    return _remove(user, Passkey.objects.filter(user=user))


def registered_before(user):
    """Every passkey of ``user``: the proof calling this holds the user's lock, so each one it sees was
    registered before it, whatever the clocks of the processes that wrote them say."""
    with transaction.atomic():
        users.lock(user)
        return _remove(user, Passkey.objects.filter(user=user))


def registered_since(user, since):
    """The passkeys registered at or after ``since`` (the proof that left a password unconfirmed)."""
    with transaction.atomic():
        users.lock(user)
        return _remove(user, Passkey.objects.filter(user=user, created_at__gte=since))


def _remove(user, query):
    removed = list(query)
    if removed:
        Passkey.objects.filter(pk__in=[passkey.pk for passkey in removed]).delete()
    for passkey in removed:
        signals.passkey_removed.send(sender=Passkey, user=user, passkey=passkey)
    return len(removed)
