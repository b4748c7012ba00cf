"""Passkeys that end with something else: the sessions they were registered from, or an unproven past.

A passkey outlives every session, so a session that should not have had the account (a stolen cookie,
a pre-hijacker's sign-up) could turn itself into a lasting credential. Two events retire such passkeys:

- a revocation that says "those sessions were not me": a password change that revokes the other
  sessions (better-auth ends the caller's too), the first proof of the address made in a signed-in
  browser. The passkeys registered from the sessions it ends go with them
  (:func:`registered_from_sessions`). A reset of a proven account is not one: it says "I forgot",
  and its owner's passkeys stay theirs;
- the first proof of the address made outside any session of the account: every passkey registered
  before it (:func:`registered_before`), as email_proof retires the social links made before it.

Kept light (models and signals only): the password and proof flows import it, and the ceremonies'
module imports those flows.
"""

from authservice import signals
from authservice.models import Passkey, Session


def registered_from_sessions(user, *, keep_token=None):
    """Retire ``user``'s passkeys registered from the sessions that a revocation sparing ``keep_token`` ends.
    Call it before the revocation: it reads which sessions are live."""
    ending = Session.objects.filter(user=user)
    if keep_token is not None:
        ending = ending.exclude(token=keep_token)
    return _remove(user, Passkey.objects.filter(user=user, created_by_session_id__in=ending.values("id")))


def every_passkey(user):
    """An operator's MFA reset (admin action, ``manage.py mfa_reset``): the user starts again."""
    return _remove(user, Passkey.objects.filter(user=user))


def registered_before(user, before):
    return _remove(user, Passkey.objects.filter(user=user, created_at__lt=before))


def _remove(user, query):
    removed = list(query)
    if removed:
        Passkey.objects.filter(pk__in=[passkey.pk for passkey in removed]).delete()
    for passkey in removed:
        signals.passkey_removed.send(sender=Passkey, user=user, passkey=passkey)
    return len(removed)
