"""I4 (never a 500) for the project's own views: a session signed out concurrently, between the
middleware's lookup and its refresh, makes ``request.user`` raise authservice's ``APIError`` inside
the project's view (and inside DRF's ``authenticate``), which neither Django nor DRF knows: a 500.

Reproduced by deleting the row right after the lookup (what a concurrent sign-out, revoke-sessions
or password reset does). Our own endpoints turn that APIError into 401 FAILED_TO_GET_SESSION; a
project view should see no session (AnonymousUser / 401), not crash.

Fix at the mechanism: ``request_session.session_of`` (shared by the middleware and the DRF class)
treats a refresh that finds the row gone as no session (clearing the cookie) instead of raising an
endpoint error outside the endpoints.
"""

from datetime import timedelta

import pytest
from django.urls import include, path
from django.utils import timezone
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from authservice.drf import SessionTokenAuthentication
from authservice.models import Session, SessionManager
from project import views


class Whoami(APIView):
    authentication_classes = [SessionTokenAuthentication]
    permission_classes = [IsAuthenticated]

    def get(self, request):
        return Response({"email": request.user.email})


urlpatterns = [path("drf/whoami", Whoami.as_view()), path("me/", views.me), path("", include("authservice.urls"))]
pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]


@pytest.fixture
def signed_out_concurrently(signed_in, monkeypatch):
    Session.objects.update(expires_at=timezone.now() + timedelta(days=1))  # due for refresh
    original = SessionManager.with_user

    def with_user(self, token):
        session = original(self, token)
        if session is not None:
            Session.objects.filter(pk=session.pk).delete()  # the other request's sign-out lands here
        return session

    monkeypatch.setattr(SessionManager, "with_user", with_user)
    signed_in.raise_request_exception = False
    return signed_in


def test_a_project_view_does_not_500(signed_out_concurrently):
    response = signed_out_concurrently.get("/me/")
    assert response.status_code != 500
    assert response.status_code == 302  # login_required: the caller has no session any more


def test_a_drf_view_does_not_500(signed_out_concurrently):
    response = signed_out_concurrently.get("/drf/whoami")
    assert response.status_code == 401, response.status_code
