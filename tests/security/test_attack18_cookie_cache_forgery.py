"""I1: a session_data cookie the service did not sign, or did not sign in this form, opens nothing.

get-session answers from the cookie cache without the database (issue 18 §2). An attacker writes
their own cookies: one claiming another user on their own valid session_token, one signed with another
secret, a truncated one, chunks swapped, renumbered or with a gap, and bytes that are not even JSON.
Each must fall back to the database (the attacker's real session and user), never to the claimed one,
and never to a 500. Defence: HMAC-SHA256 over the re-serialised payload, compared in constant time,
and chunks joined strictly by index 0..n-1.
"""

import base64
import json

import pytest

from tests.conftest import ApiClient
from tests.cookie_cache_support import (  # noqa: F401 - fixtures
    DATA, cache_on, cached, data_cookies, decoded, forge, give_long_name,
)

pytestmark = pytest.mark.django_db

TOKEN = "auth.session_token"


def get_session(cookie_header):
    response = ApiClient().api_get("/get-session", HTTP_COOKIE=cookie_header)
    assert response.status_code == 200, response.content
    return response.json()


def token_cookie(client):
    return f"{TOKEN}={client.cookies[TOKEN].value}"


def claim(client, **user_changes):
    """The client's cache payload with the user changed: (session, user) wire dicts."""
    data = decoded(data_cookies(client)[DATA])["session"]
    return data["session"], {**data["user"], **user_changes}


@pytest.fixture
def chunked(cached):
    give_long_name(cached)
    chunks = data_cookies(cached)
    assert set(chunks) == {f"{DATA}.0", f"{DATA}.1"}
    return cached, chunks


def test_a_cache_claiming_another_user_without_a_signature_is_ignored(cached):
    session, user = claim(cached, email="admin@example.com", name="Admin")
    value = forge(session, user)
    # Keep the forged body, put back the old signature: what an attacker without the secret can do.
    outer = decoded(value)
    outer["signature"] = decoded(data_cookies(cached)[DATA])["signature"]
    tampered = base64.urlsafe_b64encode(json.dumps(outer, separators=(",", ":")).encode()).decode().rstrip("=")
    answer = get_session(f"{token_cookie(cached)}; {DATA}={tampered}")
    assert answer["user"]["email"] == cached.user.email


def test_a_cache_signed_with_another_secret_is_ignored(cached):
    session, user = claim(cached, email="admin@example.com")
    value = forge(session, user, secret="not-the-service-secret-" + "x" * 20)
    assert get_session(f"{token_cookie(cached)}; {DATA}={value}")["user"]["email"] == cached.user.email


@pytest.mark.parametrize("cut", [1, 10, 100])
def test_a_truncated_cache_is_ignored(cached, cut):
    value = data_cookies(cached)[DATA]
    answer = get_session(f"{token_cookie(cached)}; {DATA}={value[:-cut]}")
    assert answer["session"]["token"] == cached.token


@pytest.mark.parametrize("value", ["", "%%%", "bnVsbA", "W1tbW1tbW1tbW1tbW10", "e30", "eyJzZXNzaW9uIjpbXX0",
                                   "!" * 5000, "[" * 3000])
def test_a_cache_that_is_not_a_cache_is_ignored(cached, value):
    assert get_session(f"{token_cookie(cached)}; {DATA}={value}")["session"]["token"] == cached.token


def test_deeply_nested_json_in_the_cache_is_ignored(cached):
    value = base64.urlsafe_b64encode(b"[" * 100000).decode().rstrip("=")
    assert get_session(f"{token_cookie(cached)}; {DATA}={value}")["session"]["token"] == cached.token


def test_chunks_sent_in_any_header_order_are_joined_by_index(chunked, django_assert_num_queries):
    client, chunks = chunked
    header = f"{DATA}.1={chunks[DATA + '.1']}; {token_cookie(client)}; {DATA}.0={chunks[DATA + '.0']}"
    with django_assert_num_queries(0):
        assert get_session(header)["user"]["name"] == "A" * 3000


def test_swapped_chunks_are_ignored(chunked):
    client, chunks = chunked
    header = f"{token_cookie(client)}; {DATA}.0={chunks[DATA + '.1']}; {DATA}.1={chunks[DATA + '.0']}"
    assert get_session(header)["session"]["token"] == client.token


def test_a_missing_last_chunk_is_ignored(chunked):
    client, chunks = chunked
    assert get_session(f"{token_cookie(client)}; {DATA}.0={chunks[DATA + '.0']}")["session"]["token"] == client.token


def test_a_gap_in_the_chunks_is_no_cache(chunked):
    client, chunks = chunked
    header = f"{token_cookie(client)}; {DATA}.0={chunks[DATA + '.0']}; {DATA}.2={chunks[DATA + '.1']}"
    assert get_session(header)["session"]["token"] == client.token


@pytest.mark.parametrize("index", ["01", "+1", "1.0", " 1", "²"])
def test_a_chunk_index_that_is_not_plain_decimal_is_not_a_chunk(chunked, index):
    client, chunks = chunked
    header = f"{token_cookie(client)}; {DATA}.0={chunks[DATA + '.0']}; {DATA}.{index}={chunks[DATA + '.1']}"
    assert get_session(header)["session"]["token"] == client.token
