"""Attack 17c, a password sign-in in flight when the owner's reset lands keeps a session (I1, I9).

The pre-hijacker (signed up with the victim's address and their own password) signs in again and again.
The victim resets the password: the first proof, which replaces the password and ends every session.
A sign-in that read the account and its old password hash before the reset committed compares the
password against that stale hash and writes its session after the reset's revocation ran: the session
is new, so nothing revoked it, and it opened with a password that no longer exists. A back-to-back loop
of sign-ins always has one in that window.

The interleaving is made deterministic: the victim's reset runs (in-process API, real database) right
after the sign-in has looked the account up (its credential row's SELECT), before the password is
compared and the session written.

Secure behaviour: a session is written only if the password it was opened with is still the account's
at the write (checked in the same transaction), or the reset's revocation also refuses sessions opened
from a check made before it.
"""

import pytest

from tests.conftest import PASSWORD, ApiClient
from tests.security.reset_races import mailed_reset_token, reads_the_credential, reset_lands_after

pytestmark = pytest.mark.django_db
VICTIM = "victim@example.com"


@pytest.fixture
def reset_token():
    assert ApiClient().api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                                   "name": "Victim"}).status_code == 200
    return mailed_reset_token(VICTIM)


def _the_victims_reset_lands_after_the_account_is_read(token):
    return reset_lands_after(token, "victim pass 99", reads_the_credential)


def test_a_password_sign_in_racing_the_owners_reset_opens_no_session(reset_token):
    attacker = ApiClient()
    with _the_victims_reset_lands_after_the_account_is_read(reset_token):
        attacker.api_post("/sign-in/email", {"email": VICTIM, "password": PASSWORD})
    assert ApiClient().api_post("/sign-in/email", {"email": VICTIM,
                                                   "password": "victim pass 99"}).status_code == 200  # reset landed
    assert attacker.api_get("/get-session").json() is None
