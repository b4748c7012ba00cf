"""The database drops every connection under load: clean 503s at worst, recovery by itself, no torn rows.

PostgreSQL only: ``pg_terminate_backend`` ends every server connection to the shared database, as a
restart or a failover does, twice during a few seconds of sign-ups and get-session calls on both servers.
"""

import json
import threading
import time

import pytest
import requests

from tests.multiprocess.conftest import DATABASE, admin_connection, postgres_url

pytestmark = pytest.mark.skipif(postgres_url() is None, reason="drops PostgreSQL connections")

LOAD_SECONDS = 4.5
THREADS = 4
UNAVAILABLE = {"message": "Service temporarily unavailable. Please try again.", "code": "SERVICE_UNAVAILABLE",
               "status": 503}


class Load:
    """Threads signing up and asking for their session, on A and B in turn, recording every answer."""

    def __init__(self, pair):
        self.pair = pair
        self.answers = []  # (what, status, content type, body text)
        self.signed_up = []  # e-mails whose sign-up answered 200
        self.failures = []  # transport errors: a dead server or a cut connection
        self.stop = threading.Event()

    def run(self, index):
        servers = self.pair.servers
        turn = index
        while not self.stop.is_set():
            turn += 1
            server = servers[turn % 2]
            client, email = self.pair.client(), self.pair.email("load")
            try:
                response = client.api_post(server, "/sign-up/email",
                                           {"name": "Load", "email": email, "password": "load horse battery"})
                self.record("sign-up", response)
                if response.status_code == 200:
                    self.signed_up.append(email)
                    for other in servers:
                        self.record("get-session", client.api_get(other, "/get-session"))
            except requests.RequestException as exc:
                self.failures.append(repr(exc))

    def record(self, what, response):
        self.answers.append((what, response.status_code, response.headers.get("Content-Type", ""), response.text))


def _terminate_connections():
    with admin_connection() as connection:
        rows = connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (DATABASE,),
        ).fetchall()
    return len(rows)


def _rows(query):
    with admin_connection(DATABASE) as connection:
        return connection.execute(query).fetchall()


def _recovered(pair, timeout=5.0):
    """Seconds until a sign-up and a get-session succeed on both servers again."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        client = pair.client()
        answers = [client.api_post(pair.a, "/sign-up/email",
                                   {"name": "After", "email": pair.email("after"), "password": "after horse battery"})]
        answers += [client.api_get(server, "/get-session") for server in pair.servers]
        if all(a.status_code == 200 for a in answers) and answers[-1].json() is not None:
            return time.monotonic() - started
        time.sleep(0.1)
    pytest.fail(f"the servers did not recover within {timeout}s: {[a.text for a in answers]}")


@pytest.fixture(scope="module")
def loaded(pair):
    """Run the load, cutting every connection twice while it runs; the Load afterwards."""
    load = Load(pair)
    threads = [threading.Thread(target=load.run, args=(i,), daemon=True) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    terminated = []
    for pause in (LOAD_SECONDS / 3, LOAD_SECONDS / 3):
        time.sleep(pause)
        terminated.append(_terminate_connections())
    time.sleep(LOAD_SECONDS / 3)
    load.stop.set()
    for thread in threads:
        thread.join(timeout=30)
    load.terminated = terminated
    return load


def test_dropped_database_connections_give_clean_answers_and_heal(pair, loaded):
    assert all(count > 0 for count in loaded.terminated), "no server connection was there to drop"
    assert loaded.failures == []
    statuses = [status for _, status, _, _ in loaded.answers]
    assert statuses.count(200) > 5, statuses  # the load really ran

    bad = [a for a in loaded.answers if not (200 <= a[1] < 500 or a[1] == 503) or "application/json" not in a[2]]
    assert bad == []
    unavailable = [a for a in loaded.answers if a[1] == 503]
    assert all(json.loads(a[3]) == UNAVAILABLE for a in unavailable), unavailable

    assert _recovered(pair) < 5
    assert pair.server_errors() == []


def test_dropped_database_connections_leave_no_torn_rows(pair, loaded):
    signed_up = set(loaded.signed_up)

    users = dict(_rows("SELECT email, id FROM authservice_user"))
    without_credential = _rows(
        "SELECT u.email FROM authservice_user u WHERE NOT EXISTS (SELECT 1 FROM authservice_account a "
        "WHERE a.user_id = u.id AND a.provider_id = 'credential' AND a.account_id = u.id::text)")
    orphan_sessions = _rows("SELECT s.id FROM authservice_session s LEFT JOIN authservice_user u "
                            "ON u.id = s.user_id WHERE u.id IS NULL")
    sessionless = _rows("SELECT u.email FROM authservice_user u WHERE u.email LIKE 'load-%' AND NOT EXISTS "
                        "(SELECT 1 FROM authservice_session s WHERE s.user_id = u.id)")

    assert signed_up - set(users) == set()  # every answered sign-up is stored
    assert without_credential == []
    assert orphan_sessions == []
    assert sessionless == []  # a sign-up stores user, account and session together or not at all
