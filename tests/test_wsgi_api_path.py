"""authservice.wsgi: API requests skip the middleware they never use, and answer the same bytes.

The example project's WSGI application sends /api/auth/... to a Django handler without sessions,
CSRF, messages and static files; these tests call it and the full stack with the same WSGI request and
compare status, headers and body.
"""

import io
import json
import subprocess
import sys

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from authservice import wsgi
from tests.conftest import BASE, ORIGIN, PASSWORD
from tests.cookie_cache_support import DATA, cache_on, cached, data_cookies  # noqa: F401 - fixtures


def call(application, method, path, *, cookie="", body=None, origin=ORIGIN, query="", extra=None):
    data = json.dumps(body).encode() if body is not None else b""
    environ = {
        "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query, "SERVER_NAME": "testserver",
        "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "testserver", "HTTP_COOKIE": cookie, "wsgi.url_scheme": "http",
        "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(data)), "wsgi.input": io.BytesIO(data),
        "wsgi.errors": sys.stderr, "wsgi.version": (1, 0), "wsgi.multithread": False,
        "wsgi.multiprocess": True, "wsgi.run_once": False,
    }
    if origin is not None:  # None: a request without an Origin header
        environ["HTTP_ORIGIN"] = origin
    environ.update(extra or {})
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer["status"], answer["headers"] = status, sorted(headers)

    # As Django's test client does: a real handler would close the test's connection, and its transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        answer["body"] = b"".join(application(environ, start_response))
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return answer


@pytest.fixture
def lean():
    return wsgi.application(WSGIHandler())


@pytest.fixture
def full():
    return WSGIHandler()


def test_the_api_middleware_is_the_projects_without_what_the_api_never_uses(settings):
    kept = wsgi.api_middleware()
    assert "corsheaders.middleware.CorsMiddleware" in kept
    assert "django.middleware.security.SecurityMiddleware" in kept
    assert "django.middleware.clickjacking.XFrameOptionsMiddleware" in kept
    assert not set(kept) & wsgi.NOT_ON_THE_API
    assert kept == [path for path in settings.MIDDLEWARE if path in kept]


def test_get_session_answers_the_same_bytes_on_the_lean_path(lean, full, signed_in):
    cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in signed_in.cookies.items())
    lean_answer = call(lean, "GET", BASE + "/get-session", cookie=cookie)
    assert lean_answer["status"] == "200 OK"
    assert json.loads(lean_answer["body"])["user"]["email"] == signed_in.user.email
    assert lean_answer == call(full, "GET", BASE + "/get-session", cookie=cookie)


def test_get_session_without_a_cookie_answers_the_same_bytes(lean, full, db):
    assert call(lean, "GET", BASE + "/get-session") == call(full, "GET", BASE + "/get-session")


def cookie_header(client):
    return "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items() if morsel.value)


def test_get_session_from_the_cookie_cache_answers_the_same_bytes(lean, full, cached, django_assert_num_queries):
    cookie = cookie_header(cached)
    assert DATA in data_cookies(cached)
    with django_assert_num_queries(0):  # served from the cache on both paths
        lean_answer = call(lean, "GET", BASE + "/get-session", cookie=cookie)
        full_answer = call(full, "GET", BASE + "/get-session", cookie=cookie)
    assert json.loads(lean_answer["body"])["user"]["email"] == cached.user.email
    assert lean_answer == full_answer


def test_get_session_past_the_cookie_cache_answers_the_same_bytes(lean, full, cached):
    cookie = cookie_header(cached)
    lean_answer = call(lean, "GET", BASE + "/get-session", cookie=cookie, query="disableCookieCache=true")
    assert any(name == "Set-Cookie" and value.lstrip().startswith(DATA) for name, value in lean_answer["headers"])
    full_answer = call(full, "GET", BASE + "/get-session", cookie=cookie, query="disableCookieCache=true")
    # Each database read re-issues the cache, signed at its own millisecond: compare all but its value.
    assert _without_cache_values(lean_answer) == _without_cache_values(full_answer)


def _without_cache_values(answer):
    headers = [(name, value.split("=", 1)[0] if value.lstrip().startswith(DATA) else value)
               for name, value in answer["headers"]]
    return answer["status"], headers, answer["body"]


def test_a_forged_cache_cookie_answers_the_same_bytes(lean, full, cached):
    cookie = cookie_header(cached).replace(f"{DATA}=", f"{DATA}=x")
    lean_answer, full_answer = (call(app, "GET", BASE + "/get-session", cookie=cookie) for app in (lean, full))
    assert json.loads(lean_answer["body"])["user"]["email"] == cached.user.email
    assert _without_cache_values(lean_answer) == _without_cache_values(full_answer)


@pytest.mark.parametrize("path", ["/no-such-endpoint", "/get-session/", "", "/", "/scim/v2/Users"])
def test_other_api_paths_answer_the_same_bytes(lean, full, db, path):
    assert call(lean, "GET", BASE + path) == call(full, "GET", BASE + path)


def test_a_cross_origin_request_gets_the_same_cors_headers(lean, full, signed_in, settings):
    settings.CORS_ALLOWED_ORIGINS = ["https://app.example"]
    cookie = cookie_header(signed_in)
    extra = {"HTTP_ORIGIN": "https://app.example", "HTTP_USER_AGENT": "test"}
    lean_answer = call(lean, "GET", BASE + "/get-session", cookie=cookie, extra=extra)
    assert ("access-control-allow-origin", "https://app.example") in lean_answer["headers"]
    assert lean_answer == call(full, "GET", BASE + "/get-session", cookie=cookie, extra=extra)


def test_a_failed_sign_in_answers_the_same_bytes(lean, full, user):
    body = {"email": user.email, "password": "not-the-password"}
    lean_answer = call(lean, "POST", BASE + "/sign-in/email", body=body)
    assert lean_answer["status"].startswith("401")
    assert lean_answer == call(full, "POST", BASE + "/sign-in/email", body=body)


def test_a_sign_in_sets_the_same_cookies_on_the_lean_path(lean, full, user):
    body = {"email": user.email, "password": PASSWORD}
    lean_answer, full_answer = (call(app, "POST", BASE + "/sign-in/email", body=body) for app in (lean, full))
    assert lean_answer["status"] == full_answer["status"] == "200 OK"
    # Each sign-in makes its own session: same headers and keys, different tokens.
    assert [name for name, _ in lean_answer["headers"]] == [name for name, _ in full_answer["headers"]]
    assert json.loads(lean_answer["body"]).keys() == json.loads(full_answer["body"]).keys()


def test_a_refused_origin_is_refused_on_the_lean_path_too(lean, signed_in):
    cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in signed_in.cookies.items())
    answer = call(lean, "POST", BASE + "/sign-out", cookie=cookie, body={}, origin="https://evil.example")
    assert answer["status"].startswith("403")
    assert json.loads(answer["body"])["code"] == "INVALID_ORIGIN"


def test_other_paths_keep_the_full_stack(lean, db):
    # The admin's login form gets its CSRF cookie from CsrfViewMiddleware: only the full stack has it.
    answer = call(lean, "GET", "/admin/login/")
    assert answer["status"] == "200 OK"
    assert any(name == "Set-Cookie" and "csrftoken=" in value for name, value in answer["headers"])


@pytest.mark.e2e
def test_better_auths_client_works_against_the_project_wsgi_application(tmp_path):
    """Over real HTTP, through project.wsgi (gunicorn), better-auth's client flow passes as it does."""
    from tests.fuzz_server import LiveServer
    from tests.peers.node import node_or_skip
    from tests.test_e2e_better_auth_client import FLOW, JS, STEPS

    node = node_or_skip("better-auth")
    server = LiveServer(tmp_path).start()
    try:
        completed = subprocess.run([node, str(FLOW), server.origin], capture_output=True, text=True, timeout=120,
                                   check=False, cwd=JS)
    finally:
        server.stop()
    assert completed.returncode == 0, f"{completed.stdout}\n{completed.stderr}"
    summary = json.loads(completed.stdout)
    assert summary["ok"] is True
    assert [s["step"] for s in summary["steps"]] == STEPS
    assert server.server_errors() == []
