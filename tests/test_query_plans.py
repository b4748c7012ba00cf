"""The hot lookups use an index, never a sequential scan, as the tables grow (issue 18 §4).

Each test runs the application's own code, captures the SQL it sends, and asks PostgreSQL for the plan
of that statement with ``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`` (inside the test's transaction, rolled
back after it). A planner picks a sequential scan for a table of a few rows, since it is cheaper there, so
each table is first filled with 10^4 rows by ``generate_series`` and analysed: what it will hold in
production, and no ``enable_seqscan = off`` to force the answer. PostgreSQL only: SQLite has no such
planner statistics.
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from authservice import db, ratelimit
from authservice.models import Account, Session, Verification
from sso import routing
from sso.models import SamlUsedAssertion
from sso.saml import store

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="query plans are PostgreSQL's"),
]

ROWS = 10_000


def run(sql, params=None):
    with connection.cursor() as cursor:
        cursor.execute(sql, params or {})


@pytest.fixture
def users(db):
    run("""INSERT INTO authservice_user (id, name, email, email_verified, password, is_superuser, is_staff,
               is_active, created_at, updated_at, two_factor_enabled)
           SELECT md5('user:' || i), 'User ' || i, 'user' || i || '@plans.test', true, '!', false, false,
               true, now(), now(), false
           FROM generate_series(1, %(rows)s) AS i""", {"rows": ROWS})
    run("ANALYZE authservice_user")
    return ROWS


@pytest.fixture
def sessions(users):
    run("""INSERT INTO authservice_session (id, token, expires_at, ip_address, user_agent, created_at,
               updated_at, user_id, sign_in_method)
           SELECT md5('session-id:' || i), md5('session:' || i), now() + interval '7 days', '', '', now(), now(),
               md5('user:' || (1 + i %% %(rows)s)), 'password'
           FROM generate_series(1, %(rows)s) AS i""", {"rows": ROWS})
    run("ANALYZE authservice_session")


@pytest.fixture
def accounts(users):
    run("""INSERT INTO authservice_account (id, account_id, provider_id, user_id, created_at, updated_at)
           SELECT md5('account:' || i), 'subject-' || i, 'provider-' || (i %% 20), md5('user:' || i), now(), now()
           FROM generate_series(1, %(rows)s) AS i""", {"rows": ROWS})
    run("ANALYZE authservice_account")


@pytest.fixture
def verifications(db):
    run("""INSERT INTO authservice_verification (id, identifier, value, expires_at, created_at, updated_at)
           SELECT md5('verification:' || i), 'saml-authn-request:_' || md5('request:' || i), '{}',
               now() + interval '1 hour', now(), now()
           FROM generate_series(1, %(rows)s) AS i""", {"rows": ROWS})
    run("ANALYZE authservice_verification")


@pytest.fixture
def tombstones(db):
    run("""INSERT INTO sso_samlusedassertion (identifier, provider_id, expires_at, created_at)
           SELECT 'saml-used-assertion:_' || md5('assertion:' || i), 'idp', now() + interval '1 hour', now()
           FROM generate_series(1, %(rows)s) AS i""", {"rows": ROWS})
    run("ANALYZE sso_samlusedassertion")


@pytest.fixture
def counters(db):
    run("""INSERT INTO authservice_ratelimitcounter (key, count, reset_at)
           SELECT 'authservice:rl:' || md5('counter:' || i), 1, now() + interval '1 hour'
           FROM generate_series(1, %(rows)s) AS i""", {"rows": ROWS})
    run("ANALYZE authservice_ratelimitcounter")


@pytest.fixture
def providers(users):
    # As SsoProvider.save() indexes them: one row per hostname of the provider's domain list.
    run("""INSERT INTO sso_ssoprovider (id, provider_id, issuer, domain, domain_verified, created_at, updated_at,
               user_id)
           SELECT md5('provider:' || i), 'provider-' || i, 'https://idp' || i || '.plans.test',
               'corp' || i || '.plans.test,mail.corp' || i || '.plans.test', true, now(), now(), md5('user:1')
           FROM generate_series(1, %(rows)s) AS i""", {"rows": ROWS // 2})
    # Each row verified on its own (issue 14 §3: routing trusts a row's status, not the provider's flag).
    run("""INSERT INTO sso_ssoproviderdomain (provider_id, domain, position, status, token)
           SELECT md5('provider:' || i), prefix || 'corp' || i || '.plans.test',
               CASE WHEN prefix = '' THEN 0 ELSE 1 END, 'verified', ''
           FROM generate_series(1, %(rows)s) AS i, unnest(ARRAY['', 'mail.']) AS prefix""", {"rows": ROWS // 2})
    run("ANALYZE sso_ssoprovider")
    run("ANALYZE sso_ssoproviderdomain")


def md5_user(i):
    import hashlib

    return hashlib.md5(f"user:{i}".encode()).hexdigest()


def statements(action):
    """The (sql, params) pairs ``action()`` sends to the database."""
    seen = []

    def record(execute, sql, params, many, context):
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        action()
    return seen


def plan_nodes(sql, params):
    """Every node of the plan PostgreSQL executed for ``sql``, as (node type, relation or index name)."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
        document = cursor.fetchone()[0]
    nodes, pending = [], [document[0]["Plan"]]
    while pending:
        node = pending.pop()
        nodes.append((node["Node Type"], node.get("Relation Name"), node.get("Index Name")))
        pending.extend(node.get("Plans", []))
    return nodes


def assert_indexed(sql, params, table):
    nodes = plan_nodes(sql, params)
    assert not [node for node in nodes if node[0] == "Seq Scan"], (sql, nodes)
    assert [node for node in nodes if node[0] in ("Index Scan", "Index Only Scan", "Bitmap Index Scan")
            and (node[1] == table or (node[2] or "").startswith(table))], (sql, nodes)


def only(seen, keyword, table):
    """The one statement of ``seen`` that starts with ``keyword`` and names ``table``."""
    found = [(sql, params) for sql, params in seen if sql.lstrip().upper().startswith(keyword) and table in sql]
    assert len(found) == 1, seen
    return found[0]


def test_the_session_lookup_by_token_uses_the_token_index(sessions):
    seen = statements(lambda: Session.objects.with_user("0" * 32))
    assert_indexed(*only(seen, "SELECT", "authservice_session"), "authservice_session")


def test_the_account_lookup_by_provider_and_account_id_uses_their_unique_index(accounts):
    seen = statements(lambda: db.get_row(Account, related="user", provider_id="provider-3", account_id="subject-3"))
    assert_indexed(*only(seen, "SELECT", "authservice_account"), "authservice_account")


def test_the_verification_lookup_by_identifier_uses_the_identifier_index(verifications):
    seen = statements(lambda: Verification.objects.find("saml-authn-request:_unknown"))
    assert_indexed(*only(seen, "SELECT", "authservice_verification"), "authservice_verification")


def test_the_sso_provider_lookup_by_domain_uses_the_domain_index(providers):
    seen = statements(lambda: routing.provider_for_hostname("mail.corp150.plans.test"))
    assert_indexed(*only(seen, "SELECT", "sso_ssoproviderdomain"), "sso_ssoproviderdomain")


def test_a_replayed_assertion_finds_its_tombstone_by_the_identifier_index(tombstones):
    assert store.reserve_assertion("idp", "_fresh", timezone.now() + timedelta(minutes=5))
    seen = statements(lambda: store.reserve_assertion("idp", "_fresh", timezone.now() + timedelta(minutes=5)))
    assert_indexed(*only(seen, "DELETE", "sso_samlusedassertion"), "sso_samlusedassertion")
    assert SamlUsedAssertion.objects.filter(identifier="saml-used-assertion:_fresh").exists()


def test_the_rate_limit_counter_is_found_by_its_key(counters, settings):
    settings.AUTHSERVICE = {**settings.AUTHSERVICE, "rate_limit": {"enabled": True, "storage": "database"}}
    ratelimit.hit("plans", 60, 100)  # opens the window
    seen = statements(lambda: ratelimit.hit("plans", 60, 100))
    assert_indexed(*only(seen, "UPDATE", "authservice_ratelimitcounter"), "authservice_ratelimitcounter")
    assert_indexed(*only(seen, "SELECT", "authservice_ratelimitcounter"), "authservice_ratelimitcounter")


def test_the_cleanup_finds_each_batch_of_expired_sessions_by_the_expiry_index(sessions):
    from authservice.management.commands.authservice_cleanup import delete_expired

    run("""INSERT INTO authservice_session (id, token, expires_at, ip_address, user_agent, created_at,
               updated_at, user_id, sign_in_method)
           SELECT md5('expired-id:' || i), md5('expired:' || i), now() - interval '1 day', '', '', now(), now(),
               md5('user:1'), 'password'
           FROM generate_series(1, 50) AS i""")
    run("ANALYZE authservice_session")
    seen = statements(lambda: delete_expired(Session, "expires_at", timezone.now()))
    select = next((sql, params) for sql, params in seen if sql.startswith('SELECT "authservice_session"."id"'))
    assert_indexed(*select, "authservice_session")


@pytest.fixture
def scim_connection(users):
    """One SCIM connection with 10^4 users, one in ten of them deleted (kept as rows)."""
    from sso.scim.models import ScimConnection

    run("""INSERT INTO sso_ssoprovider (id, provider_id, issuer, domain, domain_verified, created_at, updated_at,
               user_id)
           VALUES ('scim-provider', 'scim', 'https://idp.scim.plans.test', 'scim.plans.test', true, now(), now(),
               md5('user:1'))""")
    run("""INSERT INTO sso_scimconnection (id, provider_id, token_hint, created_at)
           VALUES ('scim-connection', 'scim-provider', '', now())""")
    run("""INSERT INTO sso_scimuser (id, connection_id, user_id, user_name, user_name_key, display_name_key,
               email_key, active, deactivated_by_scim, deleted, resource, created_at, updated_at)
           SELECT md5('scim:' || i), 'scim-connection', md5('user:' || i), 'user' || i, 'user' || i, '',
               'user' || i || '@plans.test', true, false, i %% 10 = 0, '{}', now() - i * interval '1 second', now()
           FROM generate_series(1, %(rows)s) AS i""", {"rows": ROWS})
    run("ANALYZE sso_scimuser")
    return ScimConnection.objects.get(pk="scim-connection")


def test_a_scim_page_walks_the_ordering_index_alone(scim_connection):
    from sso.scim import paging
    from sso.scim import users as scim_users

    rows = scim_users.search(scim_connection, None)
    seen = statements(lambda: list(paging.rows(rows, ROWS // 3, 100, ROWS - ROWS // 10, True)))
    walk = next((sql, params) for sql, params in seen if "OFFSET" in sql)  # then the page's 100 rows by pk
    nodes = plan_nodes(*walk)
    assert not [node for node in nodes if node[0] == "Seq Scan"], nodes
    assert [node for node in nodes if node[0] == "Index Only Scan" and node[2] == "sso_scim_user_order"], nodes


def test_a_scim_list_total_is_kept_not_counted_and_a_filtered_one_uses_an_index(scim_connection):
    from sso.scim import users as scim_users

    rows = scim_users.search(scim_connection, None)
    assert scim_users.total(scim_connection, rows, None) == ROWS - ROWS // 10  # the triggers' row
    query = 'userName eq "user7"'
    seen = statements(lambda: scim_users.total(scim_connection, scim_users.search(scim_connection, query), query))
    assert_indexed(*only(seen, "SELECT", "sso_scimuser"), "sso_scimuser")
