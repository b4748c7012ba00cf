"""The second step's statements compiled once (authservice.db) answer as the ORM's did (I9, issue 17).

verify-totp reads the pending sign-in, locks its user, reads the TOTP row and the lockout budget, records
the time step used and consumes the challenge: each is a security check (single use, expiry, budgets),
and each now runs SQL built once instead of a queryset (bench/README.md, sign-in + TOTP). security.md:
an optimisation of a security check needs a differential test. Here every fast path is run against the
ORM statement it replaced, over hostile values and a few hundred random mutations (seeded
``random.Random``): ids that almost match, expiry on the exact microsecond, counters at their bounds,
steps at the edges of a 64-bit column. On PostgreSQL, the lock is checked from another connection.
"""

import random
import threading
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, connections, transaction
from django.db.models import Q
from django.utils import timezone

from authservice import db, users
from authservice.models import TwoFactor, TwoFactorChallenge, TwoFactorLockout
from authservice.two_factor import challenge, crypto, totp

pytestmark = pytest.mark.django_db

SEED = 20261127
MUTATIONS = 200
postgresql_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")


def values_of(row):
    return None if row is None else [getattr(row, field.attname) for field in type(row)._meta.concrete_fields]


def mutations_of(rng, identifier):
    """Ids next to a real one: a character changed, the case flipped, cut, lengthened, padded."""
    position = rng.randrange(len(identifier))
    changed = identifier[:position] + rng.choice("aZ09é\t ") + identifier[position + 1:]
    return [changed, identifier.swapcase(), identifier[:-1], identifier + "x", identifier + " ", " " + identifier,
            identifier.upper(), identifier * 2]


HOSTILE_IDS = ["", " ", "x" * 32, "x" * 33, "é" * 32, "a" * 1000, "' OR 1=1 --", "%", "_" * 32, "0"]


@pytest.fixture
def people(make_user):
    """Two active users and an inactive one."""
    return [make_user(email="ada@example.com"), make_user(email="bob@example.com"),
            make_user(email="eve@example.com", is_active=False)]


def trusted_pending(challenge_id, now):
    """The ORM statement the pending sign-in was read with before, and its user check."""
    found = (TwoFactorChallenge.objects.select_related("user")
             .filter(pk=challenge_id, session_id=None, expires_at__gt=now).first())
    return found if found is not None and getattr(found.user, "is_active", True) else None


def random_challenges(rng, people, now, count):
    offsets = [timedelta(0), timedelta(microseconds=1), -timedelta(microseconds=1), timedelta(seconds=1),
               -timedelta(seconds=1), timedelta(hours=1), -timedelta(days=400), timedelta(microseconds=500_000)]
    made = []
    for _ in range(count):
        expires_at = now + rng.choice(offsets)
        if rng.random() < 0.3:
            expires_at = expires_at.replace(microsecond=0)  # SQLite stores these without a fraction
        made.append(TwoFactorChallenge.objects.create(
            user=rng.choice(people), remember=rng.random() < 0.5, attempts=rng.randint(-1, 6),
            expires_at=expires_at, session_id=rng.choice([None, None, f"session-{rng.random()}"])))
    return made


@pytest.mark.parametrize("lock", [False, True])
def test_the_pending_sign_in_read_answers_as_the_orm_filter(people, lock):
    rng = random.Random(SEED)
    now = timezone.now()
    made = random_challenges(rng, people, now, 60)
    candidates = [row.pk for row in made] + HOSTILE_IDS
    while len(candidates) < MUTATIONS + len(made):
        candidates += mutations_of(rng, rng.choice(made).pk)
    accepted = 0
    for challenge_id in candidates:
        with transaction.atomic():
            fast = challenge.pending_sign_in(challenge_id, now, lock=lock)
        trusted = trusted_pending(challenge_id, now)
        assert values_of(fast) == values_of(trusted), challenge_id
        if fast is not None:
            assert values_of(fast.user) == values_of(trusted.user), challenge_id
            accepted += 1
    assert 0 < accepted < len(made)  # both answers were seen


def test_a_time_step_is_recorded_exactly_when_the_orm_update_recorded_it(make_user):
    rng = random.Random(SEED)
    factor = TwoFactor.objects.create(user=make_user(), secret=crypto.encrypt(totp.new_secret()), verified=True)
    now_step = 59_000_000
    edges = [0, -1, 1, now_step - 1, now_step, now_step + 1, 2**63 - 1, -(2**63), 2**62]
    for _ in range(MUTATIONS):
        stored, step = rng.choice(edges + [rng.randrange(-(2**63), 2**63)]), rng.choice(edges)
        target = rng.choice([factor.pk, factor.pk, "unknown", factor.pk.swapcase()])
        TwoFactor.objects.filter(pk=factor.pk).update(last_used_step=stored)
        fast = totp.use_step(TwoFactor(pk=target), step)
        after_fast = TwoFactor.objects.get(pk=factor.pk).last_used_step
        TwoFactor.objects.filter(pk=factor.pk).update(last_used_step=stored)
        trusted = bool(TwoFactor.objects.filter(Q(last_used_step__lt=step), pk=target).update(last_used_step=step))
        assert (fast, after_fast) == (trusted, TwoFactor.objects.get(pk=factor.pk).last_used_step), (stored, step)


def test_a_challenge_is_consumed_exactly_when_the_orm_delete_consumed_it(people):
    rng = random.Random(SEED)
    for _ in range(MUTATIONS // 2):
        attempts = rng.randint(-2, 8)
        row = TwoFactorChallenge.objects.create(user=people[0], attempts=attempts,
                                                expires_at=timezone.now() + timedelta(minutes=5))
        target = rng.choice([row.pk, row.pk, row.pk + " ", row.pk.lower(), ""])
        bound = challenge.ATTEMPTS_PER_CHALLENGE
        fast = db.delete_by_pk(TwoFactorChallenge, target, below={"attempts": bound})
        fast_left = TwoFactorChallenge.objects.filter(pk=row.pk).exists()
        TwoFactorChallenge.objects.filter(pk=row.pk).delete()
        TwoFactorChallenge.objects.bulk_create([row])
        trusted, _ = TwoFactorChallenge.objects.filter(pk=target, attempts__lt=bound).delete()
        assert (fast, fast_left) == (trusted == 1, TwoFactorChallenge.objects.filter(pk=row.pk).exists()), attempts
        TwoFactorChallenge.objects.filter(pk=row.pk).delete()


def test_the_factor_and_budget_read_answers_as_two_orm_reads(make_user):
    rng = random.Random(SEED)
    now = timezone.now()
    people = []
    for index in range(40):
        user = make_user(email=f"user{index}@example.com")
        if rng.random() < 0.7:
            TwoFactor.objects.create(user=user, secret=crypto.encrypt(totp.new_secret()), verified=rng.random() < 0.6,
                                     last_used_step=rng.choice([0, 1, 2**63 - 1]))
        if rng.random() < 0.7:
            TwoFactorLockout.objects.create(user=user, failed_count=rng.randint(0, 12),
                                            locked_until=rng.choice([None, now, now - timedelta(minutes=20),
                                                                     now + timedelta(minutes=15)]))
        people.append(user)
    for user in people:
        factor, budget = db.get_pair(TwoFactor, TwoFactorLockout, user=user.pk)
        trusted_factor = TwoFactor.objects.filter(user=user).first()
        assert values_of(factor) == values_of(trusted_factor)
        # The budget rides along with a TOTP row; without one, lockout.admit reads it itself.
        trusted_budget = TwoFactorLockout.objects.filter(user=user).first() if trusted_factor else None
        assert values_of(budget) == values_of(trusted_budget)
        offered = challenge.methods_of(user) == ["totp"]
        assert offered == TwoFactor.objects.filter(user=user, verified=True).exists()


def test_an_inserted_challenge_is_the_row_the_orm_would_have_written(people):
    rng = random.Random(SEED)
    for _ in range(MUTATIONS // 4):
        fields = {"user": rng.choice(people), "remember": rng.random() < 0.5,
                  "expires_at": timezone.now() + timedelta(seconds=rng.randint(-10, 10**6),
                                                           microseconds=rng.choice([0, 1, 999_999])),
                  "otp_hash": rng.choice(["", "f" * 64]), "otp_attempts": rng.randint(0, 3)}
        fast = db.insert(TwoFactorChallenge(**fields))
        trusted = TwoFactorChallenge.objects.create(**fields)
        stored_fast, stored_trusted = (values_of(TwoFactorChallenge.objects.get(pk=row.pk)) for row in (fast, trusted))
        assert stored_fast == values_of(fast)  # the instance returned is the row written
        assert stored_fast[1:-1] == stored_trusted[1:-1]  # all but the id and created_at, which differ
        assert not fast._state.adding


def test_a_token_under_a_secret_that_left_the_settings_no_longer_decrypts_though_keys_are_cached(configure):
    token = crypto.encrypt("JBSWY3DPEHPK3PXP")
    configure(secret="another deployment secret, long enough to be real")
    assert crypto.decrypt(token) is None


# --- the lock, seen from another connection (PostgreSQL) ---------------------------------------------
def lock_attempts(statements):
    """Each ``(sql, params)`` run ``FOR UPDATE NOWAIT`` from another connection: True if it got the lock."""
    results = []

    def run():
        try:
            for sql, params in statements:
                try:
                    with transaction.atomic(), connection.cursor() as cursor:
                        cursor.execute(sql + " FOR UPDATE NOWAIT", params)
                    results.append(True)
                except OperationalError:
                    results.append(False)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return results


def user_and_challenge_locks(pending):
    def by_key(model):
        quote = connection.ops.quote_name
        return f"SELECT 1 FROM {quote(model._meta.db_table)} WHERE {quote(model._meta.pk.column)} = %s"

    return lock_attempts([(by_key(type(pending.user)), [pending.user.pk]), (by_key(TwoFactorChallenge), [pending.pk])])


@postgresql_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("database_names_the_row", [True, False])
def test_finding_the_pending_sign_in_locks_its_user_and_not_the_challenge(people, database_names_the_row,
                                                                          monkeypatch):
    # Without FOR UPDATE OF (MariaDB), a second statement takes the lock after the read.
    monkeypatch.setattr(connection.features, "has_select_for_update_of", database_names_the_row)
    db._select_sql.cache_clear()  # compiled per database, for the features it has
    try:
        row = TwoFactorChallenge.objects.create(user=people[0], expires_at=timezone.now() + timedelta(minutes=5))
        with transaction.atomic():
            pending = challenge.pending_sign_in(row.pk, timezone.now(), lock=True)
            assert user_and_challenge_locks(pending) == [False, True]
        assert user_and_challenge_locks(pending) == [True, True]
    finally:
        db._select_sql.cache_clear()


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_the_locked_read_returns_the_user_as_committed_by_whoever_held_the_lock(people):
    row = TwoFactorChallenge.objects.create(user=people[0], expires_at=timezone.now() + timedelta(minutes=5))
    holder_locked, release, found = threading.Event(), threading.Event(), []

    def deactivate_while_holding_the_lock():
        try:
            with transaction.atomic():
                users.lock(people[0])
                holder_locked.set()
                release.wait(10)
                type(people[0]).objects.filter(pk=people[0].pk).update(is_active=False)
        finally:
            connections.close_all()

    holder = threading.Thread(target=deactivate_while_holding_the_lock)
    holder.start()
    assert holder_locked.wait(10)
    reader = threading.Thread(target=lambda: (found.append(_locked_read(row.pk)), connections.close_all()))
    reader.start()
    assert waiting_for_a_lock(), "the read did not wait for the user's row"
    release.set()
    holder.join()
    reader.join()
    assert found == [None]  # read after the deactivation committed: an inactive user has no sign-in


def waiting_for_a_lock():
    """Whether another session of this database is soon blocked on a row lock (polled, at most 10 s)."""
    for _ in range(1000):
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND wait_event_type = 'Lock'")
            if cursor.fetchone()[0]:
                return True
        threading.Event().wait(0.01)
    return False


def _locked_read(challenge_id):
    with transaction.atomic():
        return challenge.pending_sign_in(challenge_id, timezone.now(), lock=True)
