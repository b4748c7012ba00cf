"""Attack 17b: racing second-factor checks from many sign-ins at once (PostgreSQL: real concurrency).

The attacker holds the victim's password, opens several pending sign-ins, and fires their guesses
together. Single-use state must stay single-use and budgets must stay budgets under concurrency (I9).
SQLite serialises writers with table locks, so these run on PostgreSQL only.
"""

import threading
from collections import Counter
from types import SimpleNamespace

import pytest
from django.db import connection

from tests.conftest import PASSWORD, ApiClient
from tests.two_factor_support import code, enrol, start_sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs a database with concurrent writers"),
]


@pytest.fixture
def victim(make_user):
    user = make_user()
    api = ApiClient()
    assert api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD}).status_code == 200
    secret, backup_codes = enrol(api)
    return SimpleNamespace(email=user.email, secret=secret, backup_codes=backup_codes)


def _together(clients, request):
    """``request(client)`` from one thread per client, released at once; the answers' (status, code)."""
    barrier = threading.Barrier(len(clients))
    answers = []

    def run(client):
        try:
            barrier.wait()
            for response in request(client):
                answers.append((response.status_code, response.json().get("code")))
        finally:
            connection.close()  # each thread's own connection, or the test database cannot be dropped

    threads = [threading.Thread(target=run, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Counter(answers)


def _wrong(secret):
    current = {code(secret, step) for step in (-1, 0, 1)}
    return next(c for c in ("000000", "111111", "222222", "333333") if c not in current)


def test_parallel_guesses_from_many_sign_ins_get_no_more_than_the_lockout_allows(victim, configure):
    # After max_failed_attempts wrong codes no further code may be compared, however the guesses are
    # spread over pending sign-ins. The lock is read before a guess and written after it, so guesses
    # in flight together all pass the check (a low limit makes every run show it).
    configure(two_factor={"account_lockout": {"max_failed_attempts": 3}})
    wrong = _wrong(victim.secret)
    sign_ins = [start_sign_in(victim.email) for _ in range(10)]
    answers = _together(sign_ins, lambda client: [
        client.api_post("/two-factor/verify-totp", {"code": wrong}) for _ in range(2)])
    assert answers[(401, "INVALID_CODE")] <= 3, answers


def test_one_totp_code_sent_to_many_sign_ins_at_once_opens_one_session(victim):
    used = code(victim.secret, 1)
    sign_ins = [start_sign_in(victim.email) for _ in range(8)]
    answers = _together(sign_ins, lambda client: [client.api_post("/two-factor/verify-totp", {"code": used})])
    assert answers[(200, None)] == 1, answers


def test_one_backup_code_sent_to_many_sign_ins_at_once_opens_one_session(victim):
    used = victim.backup_codes[0]
    sign_ins = [start_sign_in(victim.email) for _ in range(8)]
    answers = _together(sign_ins, lambda client: [
        client.api_post("/two-factor/verify-backup-code", {"code": used})])
    assert answers[(200, None)] == 1, answers


def test_one_pending_sign_in_verified_twice_at_once_opens_one_session(victim):
    # Two tabs (or a replayed request) finishing the same pending sign-in with two valid backup codes.
    browser = start_sign_in(victim.email)
    cookies = browser.cookies
    twins = [ApiClient() for _ in range(2)]
    for twin in twins:
        twin.cookies = cookies
    spare = iter(victim.backup_codes[1:3])
    answers = _together(twins, lambda client: [
        client.api_post("/two-factor/verify-backup-code", {"code": next(spare)})])
    assert answers[(200, None)] == 1, answers
