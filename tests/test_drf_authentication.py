"""authservice.drf.SessionTokenAuthentication on a project's own DRF view (defined here, routed by
this module's ``urlpatterns``): the session cookie or a bearer token, and our endpoints' Origin rule
for cookie-carrying writes."""

from datetime import timedelta

import pytest
from django.urls import include, path
from django.utils import timezone
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from authservice.drf import SessionTokenAuthentication
from authservice.models import Session
from tests.conftest import ORIGIN, ApiClient
from tests.test_origin_check import origin_log, refusals  # noqa: F401 - a fixture


class Whoami(APIView):
    authentication_classes = [SessionTokenAuthentication]
    permission_classes = [IsAuthenticated]

    def get(self, request):
        return Response({"email": request.user.email, "session": request.auth.token})

    def post(self, request):
        return Response({"email": request.user.email})


urlpatterns = [path("drf/whoami", Whoami.as_view()), path("", include("authservice.urls"))]
pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

URL = "/drf/whoami"


@pytest.fixture
def bearer_on(configure):
    configure(bearer={"enabled": True})


@pytest.fixture
def token_client(signed_in):
    """A client with no cookies that will send ``signed_in``'s signed token as a bearer."""
    client = ApiClient(origin=None)
    client.bearer = signed_in.cookies["auth.session_token"].value
    return client


def bearer(client):
    return {"HTTP_AUTHORIZATION": f"Bearer {client.bearer}"}


# --- reading ---------------------------------------------------------------------------------------
def test_get_with_the_session_cookie_sees_the_user_and_the_session(signed_in):
    response = signed_in.get(URL)
    assert response.status_code == 200
    assert response.json() == {"email": "ada@example.com", "session": signed_in.token}


def test_get_without_a_session_is_401_with_www_authenticate(api, db):
    response = api.get(URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Session realm="api"'


def test_an_expired_session_is_401(signed_in):
    Session.objects.filter(token=signed_in.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert signed_in.get(URL).status_code == 401


def test_an_inactive_user_is_401(signed_in):
    signed_in.user.is_active = False
    signed_in.user.save()
    assert signed_in.get(URL).status_code == 401


# --- the Origin rule for cookie-carrying writes ----------------------------------------------------
def test_cookie_post_from_a_trusted_origin_is_allowed(signed_in):
    response = signed_in.post(URL, HTTP_ORIGIN=ORIGIN)
    assert response.status_code == 200
    assert response.json() == {"email": "ada@example.com"}


def test_cookie_post_without_an_origin_is_403(signed_in):
    response = signed_in.post(URL)
    assert response.status_code == 403
    assert response.json()["detail"] == "Missing or null Origin"


def test_cookie_post_from_an_untrusted_origin_is_403(signed_in):
    response = signed_in.post(URL, HTTP_ORIGIN="http://evil.example")
    assert response.status_code == 403
    assert response.json()["detail"] == "Invalid origin"


def test_a_refused_origin_is_logged_as_the_endpoints_log_it(signed_in, origin_log):  # noqa: F811
    signed_in.post(URL, HTTP_ORIGIN="http://evil.example")
    [record] = refusals(origin_log)
    assert "'http://evil.example'" in record.getMessage() and ORIGIN in record.getMessage()


def test_a_missing_origin_is_logged_as_missing(signed_in, origin_log):  # noqa: F811
    signed_in.post(URL)
    assert "without an Origin" in refusals(origin_log)[0].getMessage()


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_every_unsafe_method_with_a_cookie_needs_a_trusted_origin(signed_in, method):
    assert getattr(signed_in, method)(URL).status_code == 403


def test_a_cookie_get_needs_no_origin(signed_in):
    assert signed_in.get(URL).status_code == 200


# --- bearer ------------------------------------------------------------------------------------------
def test_get_with_a_bearer_token_sees_the_user(bearer_on, token_client):
    assert token_client.get(URL, **bearer(token_client)).json()["email"] == "ada@example.com"


def test_bearer_post_needs_no_origin(bearer_on, token_client):
    assert token_client.post(URL, **bearer(token_client)).status_code == 200


def test_bearer_post_that_also_sends_cookies_needs_a_trusted_origin(bearer_on, signed_in):
    response = signed_in.post(URL, HTTP_AUTHORIZATION=f"Bearer {signed_in.cookies['auth.session_token'].value}")
    assert response.status_code == 403


def test_www_authenticate_names_bearer_when_enabled(bearer_on, api, db):
    assert api.get(URL)["WWW-Authenticate"] == 'Bearer realm="api"'


def test_a_bearer_token_is_ignored_when_disabled(token_client):
    assert token_client.get(URL, **bearer(token_client)).status_code == 401
