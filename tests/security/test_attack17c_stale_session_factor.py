"""Attack 17c: a stale session plus the password becomes a lasting second factor.

``/two-factor/disable`` needs a *fresh* session (``fresh_age``) and the password: a cookie stolen long
ago, even with the password phished since, must not turn the second factor off. But the same two
things get as much through other doors:

- ``/two-factor/generate-backup-codes`` (guard ``session``) hands out ten codes that each pass the
  second factor of a later sign-in: with the password, the thief signs in at will, forever;
- ``/two-factor/get-totp-uri`` (guard ``session``) hands out the TOTP secret itself;
- ``/change-password`` (guard ``sensitive``) with ``revokeOtherSessions`` replaces the stale session
  with a brand-new one, which *is* fresh: ``disable`` then works. The replacement keeps how the caller
  signed in (``sign_in_method``) but not when.

Invariant: I1 (a session, or a credential that makes one, only for a user who proved the secrets
asked of them: password *and* second factor). Secure behaviour: what is as strong as ``disable`` is
guarded like it (fresh), and a session made to replace another is no fresher than the one it replaces.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.conftest import PASSWORD, ApiClient
from tests.two_factor_support import code, enrolled, secret_of  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def _made_two_days_ago(client):
    from authservice.models import Session

    Session.objects.filter(user=client.user).update(created_at=timezone.now() - timedelta(days=2))
    return client


def test_a_stale_session_cannot_mint_backup_codes_that_pass_the_second_factor(enrolled):
    thief = _made_two_days_ago(enrolled)
    response = thief.api_post("/two-factor/generate-backup-codes", {"password": PASSWORD})
    if response.status_code == 200:
        # The minted code finishes a password sign-in: a lasting credential from a stale cookie.
        later = ApiClient()
        later.api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD})
        finished = later.api_post("/two-factor/verify-backup-code", {"code": response.json()["backupCodes"][0]})
        assert finished.status_code != 200, "a stale session minted a working backup code"
    assert response.status_code == 403
    assert response.json()["code"] == "SESSION_NOT_FRESH"


def test_a_stale_session_cannot_read_the_totp_secret(enrolled):
    thief = _made_two_days_ago(enrolled)
    response = thief.api_post("/two-factor/get-totp-uri", {"password": PASSWORD})
    assert response.status_code == 403, "a stale session read the TOTP secret"
    assert response.json()["code"] == "SESSION_NOT_FRESH"


def test_change_password_does_not_launder_a_stale_session_into_a_fresh_one(enrolled):
    thief = _made_two_days_ago(enrolled)
    changed = thief.api_post("/change-password", {"currentPassword": PASSWORD, "newPassword": "thief's pass 123",
                                                   "revokeOtherSessions": True})
    assert changed.status_code == 200, changed.content
    response = thief.api_post("/two-factor/disable", {"password": "thief's pass 123"})
    assert response.status_code == 403, "change-password turned a stale session into one that disables 2FA"
    assert response.json()["code"] == "SESSION_NOT_FRESH"


def test_a_stale_session_still_cannot_disable_directly(enrolled):
    # The guard that holds (tests/test_two_factor_enrolment.py), kept next to the doors around it.
    response = _made_two_days_ago(enrolled).api_post("/two-factor/disable", {"password": PASSWORD})
    assert response.status_code == 403
    assert response.json()["code"] == "SESSION_NOT_FRESH"
