"""I1: a genuine session_data cookie answers only for the session and moment it was made for.

The cache is signed by the service, so an attacker (or a stale browser) replays genuine ones: expired,
of a version the deployment retired, naming a session that itself expired, or user A's cache next to
user B's session_token. Each must fall back to the database, answering for the session_token's own
session (or nobody), never for the cached one. Defence: get-session serves the cache only when the
signed session_token equals the cached session's token (constant time) and the signed expiry, the
session's expiry and the version all hold (authservice/cookie_cache.py ``_valid``).
"""

import pytest

from authservice.models import Session
from tests.conftest import ApiClient
from tests.cookie_cache_support import (  # noqa: F401 - fixtures
    DATA, cache_on, cached, data_cookies, decoded, forge, sign_in,
)
from tests.test_cookies import set_cookies

pytestmark = pytest.mark.django_db

TOKEN = "auth.session_token"


def payload(client):
    data = decoded(data_cookies(client)[DATA])["session"]
    return data["session"], data["user"]


def get_session(client, value, **query):
    client.cookies[DATA] = value
    response = client.api_get("/get-session", query)
    assert response.status_code == 200, response.content
    return response


def test_an_expired_cache_reads_the_database(cached):
    Session.objects.filter(token=cached.token).delete()
    response = get_session(cached, forge(*payload(cached), expires_in=-1))
    assert response.content == b"null"


def test_a_cache_of_a_session_past_its_own_expiry_reads_the_database(cached):
    session, user = payload(cached)
    Session.objects.filter(token=cached.token).delete()
    value = forge({**session, "expiresAt": "2020-01-01T00:00:00.000Z"}, user)
    assert get_session(cached, value).content == b"null"


@pytest.mark.parametrize("expires_at", [None, "", "tomorrow", 1e30, "2020-01-01T00:00:00"])
def test_a_cache_whose_session_expiry_is_not_a_date_reads_the_database(cached, expires_at):
    session, user = payload(cached)
    Session.objects.filter(token=cached.token).delete()
    assert get_session(cached, forge({**session, "expiresAt": expires_at}, user)).content == b"null"


def test_a_cache_of_a_retired_version_reads_the_database(cached, configure):
    configure(session={"cookie_cache": {"enabled": True, "version": "2"}})
    Session.objects.filter(token=cached.token).delete()
    assert get_session(cached, forge(*payload(cached), version="1")).content == b"null"


def test_a_cache_without_a_version_counts_as_version_1(cached, configure):
    configure(session={"cookie_cache": {"enabled": True, "version": "2"}})
    Session.objects.filter(token=cached.token).delete()
    value = data_cookies(cached)[DATA]  # version "1", from before the change
    assert get_session(cached, value).content == b"null"


def test_the_cache_of_user_a_next_to_the_session_token_of_user_b_answers_b(cache_on, make_user):
    alice = sign_in(ApiClient(), make_user(email="alice@example.com"))
    bob = sign_in(ApiClient(), make_user(email="bob@example.com"))
    response = get_session(bob, data_cookies(alice)[DATA])
    assert response.json()["user"]["email"] == "bob@example.com"
    assert decoded(set_cookies(response)[DATA][0])["session"]["user"]["email"] == "bob@example.com"


def test_the_cache_of_user_a_with_no_session_token_is_nobody(cache_on, make_user):
    alice = sign_in(ApiClient(), make_user(email="alice@example.com"))
    stranger = ApiClient()
    assert get_session(stranger, data_cookies(alice)[DATA]).content == b"null"


def test_the_cache_with_a_badly_signed_session_token_is_nobody(cached):
    cached.cookies[TOKEN] = cached.token  # the right token, without the cookie signature
    assert get_session(cached, data_cookies(cached)[DATA]).content == b"null"


def test_a_failed_cache_is_expired_on_the_answer(cached):
    Session.objects.filter(token=cached.token).delete()
    response = get_session(cached, forge(*payload(cached), expires_in=-1))
    assert set_cookies(response)[DATA][0] == ""
