"""Attack 17c, a passkey registration in flight when the first proof lands (I1, I9).

The pre-hijacker (signed up with the victim's address, a fresh session) keeps passkey registrations
going back to back. The victim resets the password: the first proof of the address, which ends every
session and retires the passkeys registered *before* it (``created_at < now``, one DELETE). A
registration whose session was checked before the reset committed and whose row is written after that
DELETE ran is retired by nothing: its session is gone, but the passkey stays and signs in. A
back-to-back loop always has one registration in that window, so the attacker only has to keep it up.

The interleaving is made deterministic here: the victim's reset runs (in-process API, on the same real
database) right after the registration has checked its session and claimed its challenge (the challenge
row's DELETE), before py_webauthn verifies the response and the row is written: the order two processes
produce when the reset arrives during a registration.

Secure behaviour: the passkey row is written only while the session it is registered from still
exists, checked in the same transaction as the write (lock the session row, or insert ... where the
session exists), or the proof retires passkeys by who registered them rather than by time.
"""

import pytest

from tests.conftest import PASSWORD, ApiClient
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, sign_in
from tests.security.reset_races import claims_a_verification_row, mailed_reset_token, reset_lands_after

pytestmark = pytest.mark.django_db
VICTIM = "victim@example.com"


@pytest.fixture
def reset_token():
    """The link the victim asked for, still in their mailbox."""
    return mailed_reset_token(VICTIM)


@pytest.fixture
def pre_hijacker():
    client = ApiClient()
    assert client.api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                              "name": "Victim"}).status_code == 200
    return client


def _the_victims_reset_lands_after_the_challenge_is_claimed(token):
    return reset_lands_after(token, "victim pass 99", claims_a_verification_row)


def test_a_passkey_registration_racing_the_owners_reset_does_not_survive_it(pre_hijacker, reset_token):
    key = SoftAuthenticator(RP_ID, ORIGIN)
    options = pre_hijacker.api_get("/passkey/generate-register-options").json()
    with _the_victims_reset_lands_after_the_challenge_is_claimed(reset_token):
        pre_hijacker.api_post("/passkey/verify-registration", {"response": key.create(options)})
    assert pre_hijacker.api_get("/get-session").json() is None  # the reset did land, and ended the session
    later = ApiClient()
    status = sign_in(later, key).status_code
    assert later.api_get("/get-session").json() is None, f"passkey sign-in answered {status}"
