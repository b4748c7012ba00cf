"""Attack 17b, two requests racing one passkey ceremony (I9), against a live threaded server.

A challenge is single use and a credential belongs to one account; both are kept by the database
(a claiming DELETE, a conditional counter UPDATE, a unique credential ID), not by a check followed by a
write. Run on PostgreSQL to race for real:
``DATABASE_URL=postgres://postgres@127.0.0.1:5432/atk_pk pytest tests/security/test_attack17b_passkey_races.py``.
"""

import threading
from urllib.parse import urlsplit

import pytest
import requests
from django.db import connection

from tests.conftest import PASSWORD
from tests.passkey_authenticator import SoftAuthenticator

RACERS = 8
# SQLite serialises writers and answers a busy database with 503: no race to see there.
pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="races need PostgreSQL")


@pytest.fixture
def server(live_server, transactional_db, configure):
    configure(base_url=live_server.url, trusted_origins=[live_server.url])
    return live_server.url


def _client(server):
    session = requests.Session()
    session.headers["Origin"] = server
    return session


def _signed_in(server, user):
    client = _client(server)
    response = client.post(server + "/api/auth/sign-in/email", json={"email": user.email, "password": PASSWORD})
    assert response.status_code == 200, response.text
    return client


def _race(calls):
    """Run ``calls`` at once (released together by a barrier); their responses."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(index, call):
        barrier.wait()
        results[index] = call()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def _authenticator(server):
    return SoftAuthenticator(urlsplit(server).hostname, server)


def test_one_challenge_raced_by_many_requests_opens_one_session(server, make_user):
    owner = _signed_in(server, make_user(email="victim@example.com"))
    authenticator = _authenticator(server)
    options = owner.get(server + "/api/auth/passkey/generate-register-options").json()
    assert owner.post(server + "/api/auth/passkey/verify-registration",
                      json={"response": authenticator.create(options)}).status_code == 200
    browser = _client(server)
    options = browser.get(server + "/api/auth/passkey/generate-authenticate-options").json()
    cookies = browser.cookies.get_dict()
    # Each racer signs with a higher counter, so only the challenge can stop the others.
    assertions = [authenticator.get(options) for _ in range(RACERS)]

    def verify(assertion):
        return lambda: requests.post(server + "/api/auth/passkey/verify-authentication", json={"response": assertion},
                                     cookies=cookies, headers={"Origin": server})

    results = _race([verify(a) for a in assertions])
    statuses = sorted(r.status_code for r in results)
    assert statuses.count(200) == 1, statuses
    assert all(s == 400 for s in statuses if s != 200), statuses


def test_one_credential_raced_into_several_accounts_lands_in_one_and_never_answers_5xx(server, make_user):
    """The existence check and the INSERT are two statements: the losers hit the unique index, an
    IntegrityError, which must be FAILED_TO_VERIFY_REGISTRATION (400), not a 500. Several rounds, so
    the window is hit in each run, not one run in two."""
    clients = [_signed_in(server, make_user(email=f"racer{i}@example.com")) for i in range(4)]

    def register(client, response):
        return lambda: client.post(server + "/api/auth/passkey/verify-registration", json={"response": response})

    for _ in range(5):
        authenticator = _authenticator(server)
        calls = []
        for client in clients:
            options = client.get(server + "/api/auth/passkey/generate-register-options").json()
            calls.append(register(client, authenticator.create(options)))
        results = _race(calls)
        statuses = sorted(r.status_code for r in results)
        assert statuses == [200, 400, 400, 400], [(r.status_code, r.text[:120]) for r in results]
