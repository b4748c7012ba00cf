"""Attack 17c, the races against the first proof with real concurrency (PostgreSQL; I1, I9).

test_attack17c_password_sign_in_races_the_proof and _passkey_registration_races_the_proof order one
interleaving by hand on one connection. Here the pre-hijacker's sign-ins run back to back on their own
connections while the victim's reset lands: the user's row lock (authservice.users.lock) must order
every one of them before the reset (its session is then revoked) or after it (it sees the new password).
Without the lock this fails in most runs, not all (it depends on where the reset falls in a sign-in);
the hand-ordered tests are the deterministic ones.
"""

import threading

import pytest
from django.db import connection

from authservice import users
from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient
from tests.security.reset_races import mailed_reset_token

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs a database with concurrent writers"),
]
VICTIM = "victim@example.com"


@pytest.fixture
def reset_token():
    """The pre-hijacker signed up with the victim's address; the victim's reset link is in their mailbox."""
    assert ApiClient().api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                                   "name": "Victim"}).status_code == 200
    return mailed_reset_token(VICTIM)


def test_password_sign_ins_in_flight_when_the_reset_lands_leave_no_session(reset_token):
    reset_done, signing_in = threading.Event(), threading.Event()

    def sign_in_until_the_reset_is_done():
        try:
            client = ApiClient()
            while not reset_done.is_set():
                if client.api_post("/sign-in/email", {"email": VICTIM, "password": PASSWORD}).status_code == 200:
                    signing_in.set()  # the loop is running: the next sign-ins overlap the reset
            client.api_post("/sign-in/email", {"email": VICTIM, "password": PASSWORD})  # one more after it
        finally:
            connection.close()  # each thread's own connection, or the test database cannot be dropped

    attackers = [threading.Thread(target=sign_in_until_the_reset_is_done) for _ in range(3)]
    for thread in attackers:
        thread.start()
    try:
        assert signing_in.wait(timeout=60)
        response = ApiClient().api_post("/reset-password", {"token": reset_token, "newPassword": "victim pass 99"})
        assert response.status_code == 200, response.content
    finally:
        reset_done.set()
        for thread in attackers:
            thread.join()
    assert not Session.objects.filter(user=users.find_by_email(VICTIM)).exists()
