"""What one SAML ACS sign-in costs the database (issue 18: the ACS must not grow slower).

A returning user's SP-initiated sign-in, the benchmark's request (bench/README.md). The statements are
counted per table, so a test fails when a change adds a round trip to the ACS, and says where."""

import pytest
from django.db import connection

from tests.sso.saml.conftest import post_acs, session_user, user_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def returning_sign_in(saml_provider, browser):
    """The statements of a second sign-in of one user (the first one created the user)."""
    provider = saml_provider("acme-saml")
    assert provider.sp_login(browser, user_for()).status_code == 302
    form = provider.idp_response(browser, user_for())
    seen = []

    def record(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    assert response.status_code == 302 and "error=" not in response["Location"]
    assert session_user(browser)["email"] == "ada@acme.com"
    return seen


def _touching(statements, table):
    return [sql for sql in statements if f'"{table}"' in sql]


def test_the_acs_records_the_slo_session_with_one_insert(returning_sign_in):
    # The session is this sign-in's own: there is nothing to look up or update first.
    statements = _touching(returning_sign_in, "sso_samlsession")
    assert len(statements) == 1 and statements[0].startswith("INSERT"), statements


def test_the_acs_reads_the_providers_verified_domains_twice_only(returning_sign_in):
    # The gate before any parsing, and the trusted list under the provider's lock (I1).
    assert len(_touching(returning_sign_in, "sso_ssoproviderdomain")) == 2


def test_a_returning_users_acs_sign_in_runs_at_most_13_statements(returning_sign_in):
    # Provider, RelayState (read, delete), domain gate, AuthnRequest (read, delete), replay tombstone,
    # provider lock, trusted domains, account with user, session insert, last_login, SLO record; a
    # database adds its own transaction statements (SQLite's BEGIN IMMEDIATE, savepoints).
    plain = [sql for sql in returning_sign_in if not sql.upper().startswith(("BEGIN", "SAVEPOINT", "RELEASE"))]
    assert len(plain) <= 13, "\n".join(sql[:110] for sql in plain)
