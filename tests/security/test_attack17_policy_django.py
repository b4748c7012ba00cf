"""Attack 17 (policy): the staff user with a password alone goes around our endpoints, to the host
project's own views, its admin and its DRF API. A session still enrolling a second factor is nobody there."""

import pytest
from django.urls import include, path
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from authservice.drf import SessionTokenAuthentication
from project import urls as project_urls
from tests.two_factor_support import enrol, pending, staff, staff_required  # noqa: F401 - fixtures


class Whoami(APIView):
    authentication_classes = [SessionTokenAuthentication]
    permission_classes = [IsAuthenticated]

    def get(self, request):
        return Response({"email": request.user.email})


urlpatterns = [path("drf/whoami", Whoami.as_view()), path("", include(project_urls))]
pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]


def test_a_login_required_view_sees_no_user(pending):
    response = pending.get("/me/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_admin_sees_no_staff_user(pending):
    response = pending.get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_a_drf_view_sees_no_user(pending):
    assert pending.get("/drf/whoami").status_code == 401


def test_once_enrolled_the_same_session_reaches_the_host_views(pending):
    enrol(pending)
    assert pending.get("/me/").json() == {"email": pending.user.email}
    assert pending.get("/drf/whoami").json() == {"email": pending.user.email}


def test_the_middleware_flags_the_pending_session(pending):
    from django.test import RequestFactory

    from authservice.middleware import AuthSessionMiddleware

    seen = {}

    def view(request):
        seen.update(user=request.user.is_authenticated, session=bool(request.auth_session),
                    pending=bool(request.auth_enrolment_pending))
        from django.http import HttpResponse
        return HttpResponse()

    cookie = pending.cookies["auth.session_token"].value
    AuthSessionMiddleware(view)(RequestFactory().get("/", HTTP_COOKIE=f"auth.session_token={cookie}"))
    assert seen == {"user": False, "session": False, "pending": True}
