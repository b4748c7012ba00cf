"""Attack 17c, a passkey added with a stolen cookie outlives "I was compromised" once that session ended.

docs/passkeys.md: a thief with a fresh copy of the victim's session cookie can add their own passkey;
the answer is the password change that revokes the other sessions, which retires the passkeys
registered from the sessions it ends (``created_by_session_id``, passkey/retirement.py). That lookup
asks which *live* sessions the change ends. A stolen session that has already ended by then (the
victim signed out of the shared computer, as they are told to; the session expired and
``authservice_cleanup`` deleted it) is in no list, so the thief's passkey is retired by nothing and
signs in for good; with UV it skips the password and a second factor too.

Secure behaviour: the revocation that answers a stolen cookie retires every passkey registered from a
session other than the one it keeps, whether that session still exists or not.
"""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, register, sign_in
from tests.security.passkey_fixtures import signed_in_client

pytestmark = pytest.mark.django_db
NEW_PASSWORD = "brand new pass 1"


def _copy_of(client):
    thief = ApiClient()
    for name, morsel in client.cookies.items():
        thief.cookies[name] = morsel.value
    return thief


@pytest.fixture
def thiefs_key(make_user):
    """The thief copies the victim's fresh cookie and registers their own authenticator with it."""
    victim = signed_in_client(make_user(email="victim@example.com"))
    key = SoftAuthenticator(RP_ID, ORIGIN)
    assert register(_copy_of(victim), key).status_code == 200
    return victim, key


def _victim_signs_in_again_and_revokes_everything_else():
    victim = ApiClient()
    assert victim.api_post("/sign-in/email", {"email": "victim@example.com", "password": PASSWORD}).status_code == 200
    response = victim.api_post("/change-password", {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD,
                                                    "revokeOtherSessions": True})
    assert response.status_code == 200, response.content


def _thief_signs_in(key):
    later = ApiClient()
    status = sign_in(later, key).status_code
    return status, later.api_get("/get-session").json()


def test_a_passkey_from_a_stolen_session_the_victim_signed_out_of_dies_with_the_victims_revocation(thiefs_key):
    victim, key = thiefs_key
    assert victim.api_post("/sign-out", {}).status_code == 200  # the stolen session ends here
    _victim_signs_in_again_and_revokes_everything_else()
    status, session = _thief_signs_in(key)
    assert session is None, f"the thief's passkey answered {status} and opened the victim's account"


def test_a_passkey_from_a_stolen_session_that_expired_and_was_cleaned_up_dies_with_the_victims_revocation(
        thiefs_key):
    _, key = thiefs_key
    # The stolen session runs out (its expiry moved into the past stands in for a week passing).
    Session.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    call_command("authservice_cleanup", stdout=StringIO())
    _victim_signs_in_again_and_revokes_everything_else()
    status, session = _thief_signs_in(key)
    assert session is None, f"the thief's passkey answered {status} and opened the victim's account"
