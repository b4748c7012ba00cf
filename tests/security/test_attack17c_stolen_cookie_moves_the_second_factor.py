"""Attack 17c: a stale stolen cookie moves the mailbox, and the mailbox is both factors.

A user with TOTP on. The thief has a copy of their session cookie, days old, and nothing else: not
the password, not the authenticator. ``/two-factor/disable`` would refuse them (fresh session and
password). But:

1. ``/change-email`` (guard ``sensitive``: any session, no password) mails its link to the *new*
   address, the thief's; following it moves the account there;
2. ``/request-password-reset`` to that address, ``/reset-password``: the thief sets a password;
3. ``/sign-in/email`` asks for the second factor and offers ``otp`` (e-mail codes are offered to every
   2FA user while ``two_factor.otp`` is on), which mails the code to the thief's address.

The victim's authenticator never mattered: a cookie alone turned into the account, password and
second factor, for good (the victim's sessions survive too, until the thief revokes them).

Invariant: I1 (a session only for a user who proved the secrets asked of them; the second factor must
not be recoverable by whoever can move the first one's mailbox). Secure behaviour: moving the address
of a user with a second factor asks what disable asks (fresh session, or the password / a code), or an
address that moved since the factor was enrolled is not a second factor (no ``otp`` for it). The test
asserts the end result: the thief holds no session.
"""

import re

import pytest
from django.core import mail
from django.utils import timezone

from tests.conftest import ApiClient
from tests.two_factor_support import enrolled  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

THIEF_MAILBOX = "thief@evil.example"
THIEF_PASSWORD = "thief chose this 1"


def _last_link_token():
    return re.search(r"token=([^&\s\"']+)", mail.outbox[-1].body).group(1)


def _stale_copy_of(client):
    from datetime import timedelta

    from authservice.models import Session

    Session.objects.filter(user=client.user).update(created_at=timezone.now() - timedelta(days=3))
    thief = ApiClient()
    for name, morsel in client.cookies.items():
        thief.cookies[name] = morsel.value
    return thief


def _mailed_code():
    return re.search(r"\b(\d{6})\b", mail.outbox[-1].body).group(1)


def _mailed_to(address, since=0):
    return [m for m in mail.outbox[since:] if m.to == [address]]


def _reset_and_sign_in_through(mailbox):
    """Whoever reads ``mailbox``: reset the password mailed there, sign in, ask for a mailed code."""
    outsider = ApiClient()
    before = len(mail.outbox)
    outsider.api_post("/request-password-reset", {"email": mailbox, "redirectTo": "/reset"})
    if _mailed_to(mailbox, before):
        token = re.search(r"/reset-password/([^/?\s\"']+)", mail.outbox[-1].body).group(1)
        outsider.api_post("/reset-password", {"newPassword": THIEF_PASSWORD, "token": token})
    later = ApiClient()
    started = later.api_post("/sign-in/email", {"email": mailbox, "password": THIEF_PASSWORD})
    if started.status_code == 200 and started.json().get("twoFactorRedirect") is True:
        before = len(mail.outbox)
        later.api_post("/two-factor/send-otp")
        if _mailed_to(mailbox, before):
            later.api_post("/two-factor/verify-otp", {"code": _mailed_code()})
    return later


def test_a_stale_stolen_cookie_does_not_become_the_password_and_the_second_factor(enrolled):
    thief = _stale_copy_of(enrolled)
    mail.outbox.clear()
    thief.api_post("/change-email", {"newEmail": THIEF_MAILBOX})
    if _mailed_to(THIEF_MAILBOX):
        ApiClient().api_get("/verify-email", {"token": _last_link_token()})
    later = _reset_and_sign_in_through(THIEF_MAILBOX)
    assert later.api_get("/get-session").json() is None, "a stale cookie became the account, 2FA included"


def test_a_stale_stolen_cookie_does_not_move_the_address_of_a_user_with_a_second_factor(enrolled):
    thief = _stale_copy_of(enrolled)
    mail.outbox.clear()
    response = thief.api_post("/change-email", {"newEmail": THIEF_MAILBOX})
    assert response.status_code == 403 and response.json()["code"] == "SESSION_NOT_FRESH"
    assert _mailed_to(THIEF_MAILBOX) == []


def test_the_mailbox_of_a_totp_user_is_not_also_their_second_factor(enrolled):
    # The second link alone: the mailbox is the thief's however it got there (moved, or broken into).
    from authservice import users

    # A proven address, as after a completed change-email (an unproven one's first proof is another story).
    users.update(users.find_by_pk(enrolled.user.pk), email=THIEF_MAILBOX, email_verified=True)
    later = _reset_and_sign_in_through(THIEF_MAILBOX)
    assert later.api_get("/get-session").json() is None, "the mailbox that reset the password was the second factor"
