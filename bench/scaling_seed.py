"""Seed the scaling benchmark's tables to N rows each, in PostgreSQL itself (bulk ``INSERT ... SELECT
FROM generate_series``), not through the API: 10^6 rows of a table take seconds, not hours.

Every value is derived from the row number with md5 (``md5('session:' || i)`` is session i's token),
so ``bench/scaling.py`` recomputes, in Python, the token, e-mail or key of any row it wants to use
without reading them back. What each table gets, for N:

- users: N (password: one MD5 hash, reused), each with its credential account: N accounts;
- sessions: N live ones of random users, and 1,000 more of user 0 (the list-sessions row);
- verification rows: N / 10 pending SAML AuthnRequests (10^5 at 10^6), other providers' and live;
- SAML replay tombstones: N, live;
- rate-limit counters: N live windows, keyed as ``authservice.ratelimit.hit`` keys ``scale-<i>``;
- ``expired_sessions``: N sessions past their expiry, for the cleanup row (seeded right before it).
"""

import hashlib
import json

from django.db import connection

MANY_SESSIONS = 1000  # the list-sessions row's user: user 0


def md5(text):
    return hashlib.md5(text.encode()).hexdigest()


def user_id(i):
    return md5(f"user:{i}")


def user_email(i):
    return f"user{i}@example.com"


def session_token(i):
    return md5(f"session:{i}")


def many_session_token(j):
    return md5(f"many:{j}")


def rate_limit_name(i):
    return f"scale-{i}"


def _run(sql, params=None):
    with connection.cursor() as cursor:
        cursor.execute(sql, params or {})


def seed(size, password_hash, session_expires):
    """All tables but the expired sessions; returns {table: rows}. ``session_expires`` is a datetime
    far from the refresh point, so get-session never writes."""
    n = {"n": size - 1, "hash": password_hash, "expires": session_expires}
    _run("""INSERT INTO authservice_user (id, name, email, email_verified, password, is_superuser, is_staff,
                is_active, created_at, updated_at, two_factor_enabled)
            SELECT md5('user:' || i), 'User ' || i, 'user' || i || '@example.com', true, %(hash)s, false, false,
                true, now(), now(), false
            FROM generate_series(0, %(n)s) AS i""", n)
    _run("""INSERT INTO authservice_account (id, account_id, provider_id, user_id, created_at, updated_at)
            SELECT md5('account:' || i), md5('user:' || i), 'credential', md5('user:' || i), now(), now()
            FROM generate_series(0, %(n)s) AS i""", n)
    # Users drawn at random: a user's sessions are spread over the table, as sign-ins over months are.
    _run("""INSERT INTO authservice_session (id, token, expires_at, ip_address, user_agent, created_at,
                updated_at, user_id, sign_in_method)
            SELECT md5('session-id:' || i), md5('session:' || i), %(expires)s, '127.0.0.1', 'scale', now(),
                now(), md5('user:' || floor(random() * (%(n)s + 1))::int), 'password'
            FROM generate_series(0, %(n)s) AS i""", n)
    _run("""INSERT INTO authservice_session (id, token, expires_at, ip_address, user_agent, created_at,
                updated_at, user_id, sign_in_method)
            SELECT md5('many-id:' || j), md5('many:' || j), %(expires)s, '127.0.0.1', 'scale',
                now() - j * interval '1 second', now(), md5('user:0'), 'password'
            FROM generate_series(0, %(many)s) AS j""", {**n, "many": MANY_SESSIONS - 1})
    # Pending AuthnRequests of other sign-ins (filler: the benchmark's own are made by /sign-in/sso).
    value = json.dumps({"providerId": "other-saml", "relayState": None})
    _run("""INSERT INTO authservice_verification (id, identifier, value, expires_at, created_at, updated_at)
            SELECT md5('request-id:' || i), 'saml-authn-request:_' || md5('request:' || i), %(value)s,
                now() + interval '1 hour', now(), now()
            FROM generate_series(0, %(requests)s) AS i""", {"value": value, "requests": max(size // 10, 1) - 1})
    _run("""INSERT INTO sso_samlusedassertion (identifier, provider_id, expires_at, created_at)
            SELECT 'saml-used-assertion:_' || md5('assertion:' || i), 'bench-saml', now() + interval '1 hour',
                now()
            FROM generate_series(0, %(n)s) AS i""", n)
    # authservice.ratelimit.hit's key: "authservice:rl:" + the first 40 hex digits of sha256(name).
    _run("""INSERT INTO authservice_ratelimitcounter (key, count, reset_at)
            SELECT 'authservice:rl:' || left(encode(sha256(convert_to('scale-' || i, 'UTF8')), 'hex'), 40), 0,
                now() + interval '1 hour'
            FROM generate_series(0, %(n)s) AS i""", n)
    analyze()
    return counts()


def seed_expired_sessions(size):
    """``size`` sessions that expired yesterday, of random users: what authservice_cleanup deletes."""
    _run("""INSERT INTO authservice_session (id, token, expires_at, ip_address, user_agent, created_at,
                updated_at, user_id, sign_in_method)
            SELECT md5('expired-id:' || i), md5('expired:' || i), now() - interval '1 day', '127.0.0.1',
                'scale', now() - interval '8 days', now() - interval '8 days',
                md5('user:' || floor(random() * %(users)s)::int), 'password'
            FROM generate_series(0, %(n)s) AS i""", {"n": size - 1, "users": size})
    _run("VACUUM ANALYZE authservice_session")


TABLES = ("authservice_user", "authservice_account", "authservice_session", "authservice_verification",
          "sso_samlusedassertion", "authservice_ratelimitcounter")


def analyze():
    # What autovacuum would have done by the time a table holds this many rows: statistics for the
    # planner, and the visibility map (index-only scans).
    for table in TABLES:
        _run(f"VACUUM ANALYZE {table}")


def counts():
    with connection.cursor() as cursor:
        found = {}
        for table in TABLES:
            cursor.execute(f"SELECT count(*) FROM {table}")
            found[table] = cursor.fetchone()[0]
    return found
