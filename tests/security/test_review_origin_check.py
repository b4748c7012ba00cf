"""CSRF: a state-changing request that carries the victim's cookie must come from a trusted origin.

The attacker's page submits to the auth origin from the victim's browser (the victim is signed in).
Tried on sign-out, revoke-sessions, update-user, change-email, delete-user and sign-in (login CSRF):
Origin ``null``, absent, lookalikes (``http://127.0.0.1:8000.evil.example``, userinfo, other port,
``https``), a trusted Referer with a hostile Origin, a hostile Referer without Origin, and a
cross-site top-level navigation to sign-in (``Sec-Fetch-Site: cross-site``). Each is refused with 403
and changes nothing.
"""

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Session

pytestmark = pytest.mark.django_db

HOSTILE = [
    {"HTTP_ORIGIN": "null"},
    {"HTTP_ORIGIN": "http://127.0.0.1:8000.evil.example"},
    {"HTTP_ORIGIN": "http://127.0.0.1:8001"},
    {"HTTP_ORIGIN": "https://127.0.0.1:8000"},
    {"HTTP_ORIGIN": "http://evil.example", "HTTP_REFERER": "http://127.0.0.1:8000/"},
    {"HTTP_REFERER": "http://127.0.0.1:8000@evil.example/"},
    {"HTTP_REFERER": "http://evil.example/http://127.0.0.1:8000/"},
    {},
]
WRITES = [("/sign-out", None), ("/revoke-sessions", None), ("/update-user", {"name": "pwned"}),
          ("/change-email", {"newEmail": "mallory@evil.example"}), ("/delete-user", {})]


@pytest.mark.parametrize("headers", HOSTILE)
@pytest.mark.parametrize("path, body", WRITES)
def test_cookie_carrying_writes_from_hostile_origins_are_refused(signed_in, headers, path, body):
    signed_in.origin = None
    response = signed_in.api_post(path, body, **headers)
    assert response.status_code == 403, (path, headers, response.content)
    user = get_user_model().objects.get()
    assert user.name == "Ada" and user.email == "ada@example.com"
    assert Session.objects.filter(token=signed_in.token).exists()


def test_cross_site_navigation_cannot_sign_a_browser_in(api, user):
    api.origin = None
    response = api.api_post("/sign-in/email", {"email": user.email, "password": "correct horse battery"},
                            HTTP_SEC_FETCH_SITE="cross-site", HTTP_SEC_FETCH_MODE="navigate",
                            HTTP_SEC_FETCH_DEST="document")
    assert response.status_code == 403 and "auth.session_token" not in response.cookies


@pytest.mark.parametrize("origin", ["http://evil.example", "null"])
def test_sign_in_from_a_hostile_origin_without_cookie_is_refused(api, user, origin):
    api.origin = origin
    response = api.api_post("/sign-in/email", {"email": user.email, "password": "correct horse battery"})
    assert response.status_code == 403 and "auth.session_token" not in response.cookies
