"""Attack pass 17e (held): the second step's fast path keeps single use and budgets (I1, I9).

Issue 17 made the second step cheaper: the pending sign-in is found, and its user's row locked, by one
statement compiled once (authservice/db.py), and the Fernet keys are derived once per set of secrets
(two_factor/crypto.py). The attacker holds the victim's password (so can open pending sign-ins at
will), an account of their own, and a browser of their own; they race requests and replay cookies.
Each attack below held; kept as a regression.

- A pending sign-in is used once, whatever finishes it: one finished by a backup code with
  ``disableSession`` cannot be finished again for a session.
- A session in the same browser decides whose factor is checked: the attacker's own session next to
  the victim's two_factor cookie checks the attacker's factor, and neither consumes nor finishes the
  victim's pending sign-in.
- A two_factor cookie signed before a rotation of the secret is no pending sign-in after it, and
  TOTP secrets under a secret that left the fallbacks stop verifying although the keys were cached.
- (PostgreSQL) Under concurrency: one pending sign-in's five tries stay five; one TOTP code sent at
  once to the owner's signed-in check and to the attacker's pending sign-in is accepted once; a
  password change that commits while a verification waits for the user's row lock wins (the
  verification read its pending sign-in from a snapshot taken before the change).
"""

import threading
import time
from collections import Counter
from types import SimpleNamespace

import pyotp
import pytest
from django.db import connection, connections, transaction

from authservice import users
from authservice.flows import passwords
from authservice.models import Session, TwoFactorChallenge
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.two_factor_support import secret_of, start_sign_in

postgresql_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="needs concurrent writers")

# TOTP's clock, held in the middle of a time step: a run that crosses a step boundary decides the same.
NOW = (int(time.time()) // 30) * 30 + 15


@pytest.fixture(autouse=True)
def _totp_clock(monkeypatch):
    from authservice.two_factor import totp

    monkeypatch.setattr(totp, "time", SimpleNamespace(time=lambda: NOW))


def code(secret, offset_steps=0):
    return pyotp.TOTP(secret).at(NOW + 30 * offset_steps)


def enrol(api):
    """Turn TOTP on for the signed-in ``api`` user with the code of step -1; (secret, backup codes)."""
    enabled = api.api_post("/two-factor/enable", {"password": PASSWORD})
    assert enabled.status_code == 200, enabled.content
    secret = secret_of(enabled.json()["totpURI"])
    verified = api.api_post("/two-factor/verify-totp", {"code": code(secret, -1)})
    assert verified.status_code == 200, verified.content
    return secret, enabled.json()["backupCodes"]


@pytest.fixture
def enrolled(signed_in):
    signed_in.secret, signed_in.backup_codes = enrol(signed_in)
    return signed_in


def _wrong(secret):
    current = {code(secret, step) for step in (-1, 0, 1)}
    return next(c for c in ("000000", "111111", "222222", "333333") if c not in current)


# --- single use, whatever finishes it --------------------------------------------------------------
@pytest.mark.django_db
def test_a_pending_sign_in_finished_without_a_session_cannot_be_finished_again(enrolled):
    attacker = start_sign_in(enrolled.user.email)
    cookie = attacker.cookies["auth.two_factor"].value
    first = attacker.api_post("/two-factor/verify-backup-code",
                              {"code": enrolled.backup_codes[0], "disableSession": True})
    assert first.status_code == 200 and first.json()["token"] is None
    replay = ApiClient()
    replay.cookies["auth.two_factor"] = cookie
    for path, body in (("/two-factor/verify-totp", {"code": code(enrolled.secret, 1)}),
                       ("/two-factor/verify-backup-code", {"code": enrolled.backup_codes[1]})):
        answer = replay.api_post(path, body)
        assert answer.status_code == 401 and error_of(answer)["code"] == "INVALID_TWO_FACTOR_COOKIE"
    assert Session.objects.filter(user=enrolled.user).count() == 1  # the owner's own


@pytest.mark.django_db
def test_the_victims_two_factor_cookie_next_to_the_attackers_session_checks_the_attackers_factor(
        enrolled, make_user):
    mallory = make_user(email="mallory@example.com")
    browser = ApiClient()
    assert browser.api_post("/sign-in/email", {"email": mallory.email, "password": PASSWORD}).status_code == 200
    mallory_secret, _ = enrol(browser)
    victims = start_sign_in(enrolled.user.email)
    browser.cookies["auth.two_factor"] = victims.cookies["auth.two_factor"].value
    pending = TwoFactorChallenge.objects.get(user=enrolled.user, session_id=None)

    # The victim's code (the attacker shoulder-surfed it) against the attacker's own factor: wrong.
    answer = browser.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret, 1)})
    assert answer.status_code == 401 and error_of(answer)["code"] == "INVALID_CODE"
    # The attacker's own code: the attacker's own signed-in check, not the victim's sign-in.
    own = browser.api_post("/two-factor/verify-totp", {"code": code(mallory_secret, 1)})
    assert own.status_code == 200 and own.json()["user"]["email"] == mallory.email
    assert Session.objects.filter(user=enrolled.user).count() == 1
    # The victim's pending sign-in is untouched by either: no try spent, still the victim's to finish.
    pending.refresh_from_db()
    assert pending.attempts == 0
    finished = victims.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret, 1)})
    assert finished.status_code == 200 and finished.json()["user"]["email"] == enrolled.user.email


# --- rotation of the secret ------------------------------------------------------------------------
OLD = "old-deployment-secret-" + "o" * 32
NEW = "new-deployment-secret-" + "n" * 32


@pytest.mark.django_db
def test_a_two_factor_cookie_signed_before_a_rotation_is_no_pending_sign_in_after_it(make_user, configure):
    configure(secret=OLD)
    user = make_user()
    api = ApiClient()
    assert api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD}).status_code == 200
    secret, backup_codes = enrol(api)
    attacker = start_sign_in(user.email)
    configure(secret=NEW, two_factor={"secret_fallbacks": [OLD]})
    for path, body in (("/two-factor/verify-totp", {"code": code(secret, 1)}),
                       ("/two-factor/verify-backup-code", {"code": backup_codes[0]})):
        answer = attacker.api_post(path, body)
        assert answer.status_code == 401 and error_of(answer)["code"] == "INVALID_TWO_FACTOR_COOKIE"
    assert Session.objects.filter(user=user).count() == 1  # the owner's own


@pytest.mark.django_db
def test_totp_stops_verifying_once_its_secret_leaves_the_fallbacks_although_the_keys_were_cached(
        make_user, configure):
    configure(secret=OLD)
    user = make_user()
    api = ApiClient()
    assert api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD}).status_code == 200
    secret, _ = enrol(api)
    configure(secret=NEW, two_factor={"secret_fallbacks": [OLD]})
    # Under the fallback the keys (NEW, OLD) are derived and cached, and the code verifies.
    assert start_sign_in(user.email).api_post(
        "/two-factor/verify-totp", {"code": code(secret, 0)}).status_code == 200
    configure(secret=NEW, two_factor={"secret_fallbacks": []})
    late = start_sign_in(user.email)
    answer = late.api_post("/two-factor/verify-totp", {"code": code(secret, 1)})
    assert answer.status_code == 401 and error_of(answer)["code"] == "INVALID_CODE"
    assert TwoFactorChallenge.objects.get(user=user, session_id=None).attempts == 1  # counted as a guess


# --- concurrency (PostgreSQL) ----------------------------------------------------------------------
def _together(clients, request):
    barrier = threading.Barrier(len(clients))
    answers = []

    def run(client):
        try:
            barrier.wait()
            for response in request(client):
                answers.append((response.status_code, response.json().get("code")))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Counter(answers)


@pytest.fixture
def victim(make_user):
    user = make_user()
    api = ApiClient()
    assert api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD}).status_code == 200
    secret, backup_codes = enrol(api)
    return SimpleNamespace(user=user, email=user.email, secret=secret, backup_codes=backup_codes, api=api)


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_one_pending_sign_in_guessed_from_many_threads_at_once_gets_five_tries(victim, configure):
    configure(two_factor={"account_lockout": {"max_failed_attempts": 100}})
    browser = start_sign_in(victim.email)
    twins = [ApiClient() for _ in range(10)]
    for twin in twins:
        twin.cookies = browser.cookies
    wrong = _wrong(victim.secret)
    answers = _together(twins, lambda client: [client.api_post("/two-factor/verify-totp", {"code": wrong})])
    assert answers[(401, "INVALID_CODE")] == 5, answers
    # The sixth try killed the sign-in: the right code now finishes nothing.
    late = browser.api_post("/two-factor/verify-totp", {"code": code(victim.secret, 1)})
    assert late.status_code in (400, 401)
    assert Session.objects.filter(user=victim.user).count() == 1


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_one_totp_code_sent_at_once_to_the_owners_check_and_a_pending_sign_in_is_accepted_once(victim):
    used = code(victim.secret, 1)
    attackers = [start_sign_in(victim.email) for _ in range(4)]
    owners = [victim.api for _ in range(1)]
    answers = _together(attackers + owners, lambda client: [
        client.api_post("/two-factor/verify-totp", {"code": used})])
    assert answers[(200, None)] == 1, answers
    assert Session.objects.filter(user=victim.user).count() <= 2


def _waiting_for_a_lock():
    for _ in range(1000):
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND wait_event_type = 'Lock'")
            if cursor.fetchone()[0]:
                return True
        threading.Event().wait(0.01)
    return False


@postgresql_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("method", ["totp", "backup_code"])
def test_a_password_change_committing_while_a_verification_waits_for_the_lock_wins(victim, method):
    # The owner, seeing the sign-in alert, changes the password. The attacker's verification (with a
    # valid code) started just before: its statement read the pending sign-in from a snapshot taken
    # before the change, then waited for the user's row, which the change held. Once it commits, the
    # row lock returns the user as changed, and the pending sign-in the change deleted must not open.
    attacker = start_sign_in(victim.email)
    locked, release, answers = threading.Event(), threading.Event(), []

    def change_password_holding_the_lock():
        try:
            with transaction.atomic():
                users.lock(victim.user)
                passwords.store_password(victim.user, "a new password for the owner")
                locked.set()
                release.wait(10)
        finally:
            connections.close_all()

    def verify():
        try:
            if method == "totp":
                answers.append(attacker.api_post("/two-factor/verify-totp", {"code": code(victim.secret, 1)}))
            else:
                answers.append(attacker.api_post("/two-factor/verify-backup-code", {"code": victim.backup_codes[0]}))
        finally:
            connections.close_all()

    holder = threading.Thread(target=change_password_holding_the_lock)
    holder.start()
    assert locked.wait(10)
    verifier = threading.Thread(target=verify)
    verifier.start()
    assert _waiting_for_a_lock(), "the verification did not wait for the user's row"
    release.set()
    holder.join()
    verifier.join()
    (answer,) = answers
    assert answer.status_code in (400, 401), answer.content
    assert Session.objects.filter(user=victim.user).count() == 1  # the owner's own
