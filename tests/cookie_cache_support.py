"""Helpers for the session cookie cache tests (tests/test_session_cookie_cache.py, tests/security/)."""

import base64
import json
import time

import pytest

from authservice import app_settings, cookie_cache
from tests.conftest import PASSWORD, ApiClient

DATA = "auth.session_data"


@pytest.fixture
def cache_on(configure):
    return configure(session={"cookie_cache": {"enabled": True}})


@pytest.fixture
def cached(cache_on, api, user):
    """An ApiClient signed in with the cookie cache on: it holds session_token and session_data."""
    return sign_in(api, user)


def sign_in(client, user):
    response = client.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 200, response.content
    client.user, client.token = user, response.json()["token"]
    return client


def data_cookies(client):
    """The non-empty session_data cookies the client holds: {name: value}."""
    return {name: morsel.value for name, morsel in client.cookies.items()
            if (name == DATA or name.startswith(DATA + ".")) and morsel.value}


def decoded(value):
    """The JSON inside a cache cookie value (no signature check)."""
    return json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))


def forge(session, user, *, expires_in=300, version="1", secret=None, updated_at=None):
    """A validly signed cache value (with the service's secret unless told) for wire dicts."""
    now = int(time.time() * 1000)
    return cookie_cache.encode(session, user, expires_at=now + expires_in * 1000,
                               updated_at=updated_at or now, version=version,
                               secret=secret or app_settings.secret())


def fresh_client(cookies):
    """A client holding exactly ``cookies`` ({name: value})."""
    client = ApiClient()
    for name, value in cookies.items():
        client.cookies[name] = value
    return client


LONG_NAME = "A" * 3000  # makes the cache cookie go over 4 KB: two chunks


def give_long_name(client):
    """Rename the client's user to :data:`LONG_NAME`, or skip where the user model keeps a shorter name
    (auth.User: first_name/last_name, 150 each), whose cache never needs chunks."""
    from authservice import wire

    client.api_post("/update-user", {"name": LONG_NAME})
    client.user.refresh_from_db()
    if wire.user(client.user)["name"] != LONG_NAME:
        pytest.skip("the user model keeps a shorter name: the cache never needs chunks")
