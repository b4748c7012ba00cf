"""The session cookie cache speaks better-auth 1.7's compact format, both ways (issue 18 §2).

better-auth's own code runs in Node (the pinned package in tests/js): its ``getCookieCache`` reads the
cookies we set, our decoder reads the cookies its server sets, whole or chunked, and its client
behaves against us as against better-auth: a second browser's change is seen only once the cache is
bypassed (``disableCookieCache``) or expires.
"""

import json
import subprocess
from pathlib import Path

import pytest

from authservice import cookie_cache, wire
from authservice.api.context import Context
from tests.cookie_cache_support import DATA, cache_on, data_cookies, sign_in  # noqa: F401 - fixtures
from tests.peers.node import node_or_skip

pytestmark = pytest.mark.django_db

JS = Path(__file__).resolve().parent / "js"
SECRET = "a-shared-secret-of-forty-characters-0123"


def node(*args):
    completed = subprocess.run([node_or_skip("better-auth"), str(JS / "cookie_cache_interop.mjs"), *args],
                               capture_output=True, text=True, timeout=60, check=False, cwd=JS)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


@pytest.fixture
def shared_secret(cache_on, configure):
    configure(secret=SECRET)


def cookie_header(client):
    return "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items() if morsel.value)


def better_auth_cookies(name_length):
    made = node("make", SECRET, str(name_length))
    assert made["status"] == 200
    return "; ".join(line.split(";", 1)[0] for line in made["setCookie"])


@pytest.mark.parametrize("name", ["Ada", "Ada Lovelace ✓ «ü»", "A" * 3000])
def test_better_auths_get_cookie_cache_accepts_our_cookies(shared_secret, api, make_user, name):
    user = make_user(name=name)
    if wire.user(user)["name"] != name:
        pytest.skip("the user model keeps a shorter name (auth.User: first_name/last_name, 150 each)")
    sign_in(api, user)
    if len(name) > 1000:
        assert set(data_cookies(api)) == {f"{DATA}.0", f"{DATA}.1"}
    payload = node("read", SECRET, cookie_header(api))
    assert payload["user"]["name"] == name
    assert payload["session"]["token"] == api.token
    assert payload["version"] == "1"


def test_better_auths_get_cookie_cache_refuses_our_cookies_under_another_secret(shared_secret, api, user):
    sign_in(api, user)
    assert node("read", "another-secret-of-forty-characters-xxxxx", cookie_header(api)) is None


@pytest.mark.parametrize("name_length", [5, 5000])
def test_our_get_session_serves_a_cache_better_auth_made(shared_secret, name_length):
    ctx = Context(None, headers={"cookie": better_auth_cookies(name_length)})
    if name_length > 1000:
        assert f"{DATA}.0" in ctx.cookies and DATA not in ctx.cookies
    answer = cookie_cache.served(ctx)
    assert answer["user"]["email"] == "ba@example.com"
    assert answer["user"]["name"] == "B" * name_length
    assert answer["session"]["userId"] == answer["user"]["id"]


def test_a_cache_better_auth_made_under_another_secret_is_not_served(shared_secret, configure):
    header = better_auth_cookies(5)
    configure(secret="another-secret-of-forty-characters-xxxxx")
    assert cookie_cache.served(Context(None, headers={"cookie": header})) is None


@pytest.mark.e2e
def test_better_auths_client_sees_the_cache_as_with_better_auth(live_server, configure):
    node_path = node_or_skip("better-auth")
    configure(base_url=live_server.url, session={"cookie_cache": {"enabled": True}})
    completed = subprocess.run([node_path, str(JS / "cookie_cache_client_flow.mjs"), live_server.url],
                               capture_output=True, text=True, timeout=120, check=False, cwd=JS)
    assert completed.returncode == 0, f"{completed.stdout}\n{completed.stderr}"
    summary = json.loads(completed.stdout)
    assert [(s["step"], s["value"]) for s in summary["steps"]] == [
        ("signUp.email", "First"),
        ("getSession", "First"),
        ("getSession again", "First"),
        ("signIn.email (second browser)", "First"),
        ("updateUser (second browser)", True),
        ("getSession in the second browser", "Second"),
        ("getSession (cached)", "First"),
        ("getSession disableCookieCache", "Second"),
        ("signOut", True),
        ("getSession after signOut", None),
    ]
