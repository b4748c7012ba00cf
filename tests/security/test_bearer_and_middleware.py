"""Bearer tokens, the middleware and the DRF class cannot be used to get around the session's rules.

- CSRF (the Origin rule): a bearer header is no ambient credential, but a request that also sends the
  victim's cookie is checked as any cookie request: adding an ``Authorization`` header (the
  attacker's own valid token) never skips the Origin check, on our endpoints or in the DRF class.
- I1: a bearer that does not verify names no session: a forged signature, an unsigned token when
  signatures are required, a bearer while the plugin is off. It never falls back to the raw part of
  a signed-looking value.
- A session that expired, or was revoked, is no user for the middleware either.
- I10: the session cookie's value is not handed to scripts (``set-auth-token``) unless bearer is on.
"""

from datetime import timedelta

import pytest
from django.urls import include, path
from django.utils import timezone
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from authservice import tokens
from authservice.drf import SessionTokenAuthentication
from authservice.models import Session
from project import views
from tests.conftest import PASSWORD, ApiClient


class Transfer(APIView):
    authentication_classes = [SessionTokenAuthentication]
    permission_classes = [IsAuthenticated]

    def post(self, request):
        return Response({"moved_for": request.user.email})


urlpatterns = [path("drf/transfer", Transfer.as_view()), path("me/", views.me),
               path("", include("authservice.urls"))]
pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

COOKIE = "auth.session_token"


@pytest.fixture
def bearer_on(configure):
    configure(bearer={"enabled": True})


@pytest.fixture
def victim(signed_in):
    """The victim's browser: holds a session cookie, sends no Origin (the attacker's form post)."""
    signed_in.origin = None
    return signed_in


@pytest.fixture
def attacker_token(make_user):
    """A valid signed token of the attacker's own account."""
    make_user(email="mallory@evil.example")
    response = ApiClient().api_post("/sign-in/email", {"email": "mallory@evil.example", "password": PASSWORD})
    return response.cookies[COOKIE].value


def bearer(token):
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


# --- the Origin rule cannot be skipped with a bearer -------------------------------------------------
@pytest.mark.parametrize("origin", [{}, {"HTTP_ORIGIN": "null"}, {"HTTP_ORIGIN": "http://evil.example"}])
def test_cookie_plus_bearer_write_without_a_trusted_origin_is_refused(bearer_on, victim, attacker_token,
                                                                       origin):
    response = victim.api_post("/revoke-sessions", **bearer(attacker_token), **origin)
    assert response.status_code == 403
    assert Session.objects.filter(token=victim.token).exists()
    assert Session.objects.count() == 2


def test_cookie_plus_the_victims_own_bearer_is_still_origin_checked(bearer_on, victim):
    response = victim.api_post("/sign-out", **bearer(victim.cookies[COOKIE].value))
    assert response.status_code == 403
    assert Session.objects.filter(token=victim.token).exists()


def test_drf_cookie_plus_bearer_write_without_origin_is_refused(bearer_on, victim, attacker_token):
    assert victim.post("/drf/transfer", **bearer(attacker_token)).status_code == 403


def test_drf_cookie_write_with_a_disabled_bearer_is_refused(victim, attacker_token):
    assert victim.post("/drf/transfer", **bearer(attacker_token)).status_code == 403


# --- forged and unsigned tokens ------------------------------------------------------------------------
def test_a_token_signed_with_another_secret_names_no_session(bearer_on, signed_in):
    forged = tokens.sign(signed_in.token, secret="not-the-secret-" + "x" * 32)
    app = ApiClient(origin=None)
    assert app.api_get("/get-session", **bearer(forged)).json() is None


def test_a_bad_signature_does_not_fall_back_to_the_raw_token(bearer_on, signed_in):
    app = ApiClient(origin=None)
    assert app.api_get("/get-session", **bearer(signed_in.token + ".forged")).json() is None


def test_an_unsigned_token_names_no_session_when_signatures_are_required(configure, signed_in):
    configure(bearer={"enabled": True, "require_signature": True})
    app = ApiClient(origin=None)
    assert app.api_get("/get-session", **bearer(signed_in.token)).json() is None
    assert app.get("/me/", **bearer(signed_in.token)).status_code == 302
    assert app.post("/drf/transfer", **bearer(signed_in.token)).status_code == 401


# --- bearer while disabled --------------------------------------------------------------------------
def test_a_valid_bearer_is_ignored_everywhere_while_disabled(signed_in):
    app = ApiClient(origin=None)
    value = signed_in.cookies[COOKIE].value
    assert app.api_get("/get-session", **bearer(value)).json() is None
    assert app.api_post("/sign-out", **bearer(value)).status_code == 200
    assert Session.objects.filter(token=signed_in.token).exists()
    assert app.get("/me/", **bearer(value)).status_code == 302
    assert app.post("/drf/transfer", **bearer(value)).status_code == 401


def test_the_cookie_value_is_not_exposed_in_a_header_while_disabled(api, user):
    response = api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD})
    assert "set-auth-token" not in response


# --- the middleware keeps the session's rules --------------------------------------------------------
def test_an_expired_session_is_anonymous_in_the_middleware(signed_in):
    Session.objects.filter(token=signed_in.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert signed_in.get("/me/").status_code == 302


def test_an_expired_session_is_anonymous_through_a_bearer(bearer_on, signed_in):
    value = signed_in.cookies[COOKIE].value
    Session.objects.filter(token=signed_in.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert ApiClient(origin=None).get("/me/", **bearer(value)).status_code == 302


def test_a_cookie_signed_with_another_secret_is_anonymous_in_the_middleware(signed_in):
    signed_in.cookies[COOKIE] = tokens.sign(signed_in.token, secret="not-the-secret-" + "x" * 32)
    assert signed_in.get("/me/").status_code == 302
