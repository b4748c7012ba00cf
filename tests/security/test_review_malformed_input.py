"""I4/I6 and "never a 500": hostile bodies, content types, methods and queries on every core route,
and mass assignment through /update-user.

The attacker sends malformed JSON, deep nesting (5000 levels), lone surrogates, NUL, wrong types,
oversized strings and e-mails, unparsable URLs (``http://[::1``, port 99999), non-JSON content types,
odd HTTP methods and repeated query parameters, to every core route with a session cookie. Each answer
must be a JSON error (or a redirect) below 500. ``/update-user`` with ``emailVerified``,
``email_verified``, ``is_staff``, ``is_superuser``, ``id`` must not change those columns.
"""
import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("body", [
    {"emailVerified": True}, {"email_verified": True}, {"is_staff": True, "name": "x"},
    {"is_superuser": True, "name": "x"}, {"id": "x", "name": "y"}, {"name": ["a"]}, {"name": {"a": 1}},
    {"name": "x" * 100000}, {"image": 5}, {"name": "a\u0000b"},
])
def test_update_user_sets_only_name_and_image(signed_in, body):
    r = signed_in.api_post("/update-user", body)
    u = get_user_model().objects.get()
    assert r.status_code < 500
    assert not u.email_verified and not u.is_staff


@pytest.mark.parametrize("path", ["/sign-in/email", "/sign-up/email", "/update-user", "/reset-password",
                                  "/request-password-reset", "/sign-in/social", "/change-email",
                                  "/revoke-session", "/delete-user", "/get-session", "/sign-out",
                                  "/callback/x", "/send-verification-email", "/link-social",
                                  "/verify-password", "/unlink-account", "/update-session", "/revoke-sessions",
                                  "/revoke-other-sessions", "/change-password"])
@pytest.mark.parametrize("data,ct", [
    (b"{", "application/json"), (b"[" * 5000 + b"]" * 5000, "application/json"),
    (b'{"a":' * 3000 + b"1" + b"}" * 3000, "application/json"),
    (b"\xff\xfe", "application/json"), (b"null", "application/json"), (b"[]", "application/json"),
    (b"1e999999", "application/json"), (b'"x"', "application/json"), (b"a=b&a=c", "application/x-www-form-urlencoded"),
    (b"x", "text/plain"), (b'{"email": "a@b.co", "password": 1, "token": [], "newPassword": {}, "provider": 1}', "application/json"),
    (b'{"email": "a@b.co", "password": "' + b"a" * 60000 + b'", "newPassword": "' + b"b" * 100 + b'", "token": "x", "provider":"x", "name": "n"}', "application/json"),
    (b'{"email": "' + b"a" * 300 + b'@b.co", "password": "xxxxxxxxxx", "name": "n", "newEmail": "x@y.z"}', "application/json"),
    (b'{"email": "a@b.co", "password": "xxxxxxxxxx", "name": "n", "callbackURL": "http://[::1"}', "application/json"),
    (b'{"email": "a@b.co", "password": "xxxxxxxxxx", "name": "n", "callbackURL": "http://a:99999/"}', "application/json"),
    (b'{"email": "a@b.co", "password": "xxxxxxxxxx", "name": "n", "callbackURL": "\\u0000"}', "application/json"),
    (b'{"email": "a@b.co", "password": "xxxxxxxxxx", "name": "n", "rememberMe": "yes", "image": 1}', "application/json"),
    (b'{"email": "a@b.co", "password": "\\ud800xxxxxxxxx", "name": "n"}', "application/json"),
    (b'{"email": "a\\u0000@b.co", "password": "xxxxxxxxxxxx", "name": "n"}', "application/json"),
    (b'{"email": "\xc3\xa9@b.co", "password": "xxxxxxxxxxxx", "name": "n"}', "application/json"),
    (b'{"sessionId": 1, "token": 1, "accountId": 1, "providerId": 1}', "application/json"),
])
def test_hostile_post_bodies_never_500(signed_in, path, data, ct):
    r = signed_in.generic("POST", "/api/auth" + path, data, content_type=ct, HTTP_ORIGIN="http://127.0.0.1:8000")
    assert r.status_code < 500, (r.status_code, r.content[:300])
    assert r.status_code == 302 or r["Content-Type"].startswith("application/json"), r.get("Content-Type")


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "PROPFIND", "GET"])
@pytest.mark.parametrize("path", ["/sign-in/email", "/get-session", "/callback/x", "/reset-password/abc", "/nope", "", "/"])
def test_odd_methods_never_500(api, method, path):
    r = api.generic(method, "/api/auth" + path)
    assert r.status_code < 500, (r.status_code, r.content[:300])


@pytest.mark.parametrize("query", [
    {"callbackURL": "http://[::1"}, {"callbackURL": ["a", "b"]}, {"token": ["a", "b"]}, {"token": "\x00"},
    {"token": "a" * 100000}, {"callbackURL": "/\\evil.com"}, {"state": ["a", "b"], "code": "x"},
    {"state": "\x00"}, {"disableCookieCache": "maybe"}, {"disableRefresh": ["1", "2"]},
])
@pytest.mark.parametrize("path", ["/verify-email", "/reset-password/abc", "/reset-password/%00", "/delete-user/callback",
                                  "/callback/x", "/get-session", "/list-sessions", "/list-accounts", "/error", "/ok"])
def test_hostile_queries_never_500(signed_in, path, query):
    r = signed_in.get("/api/auth" + path, query)
    assert r.status_code < 500, (r.status_code, r.content[:300])
