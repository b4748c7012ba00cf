"""authservice.middleware.AuthSessionMiddleware: request.user and request.auth_session from our session.

The example project installs it after Django's AuthenticationMiddleware; ``/me/`` is a
``@login_required`` view answering ``request.user``'s e-mail.
"""

import weakref
from datetime import timedelta

import pytest
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils import timezone
from django.views import View

from authservice.middleware import AuthSessionMiddleware
from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db

COOKIE = "auth.session_token"


def me(client):
    return client.get("/me/")


def is_login_redirect(response):
    return response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.fixture
def cookie_request(signed_in):
    """A request carrying ``signed_in``'s session cookie, for the middleware called directly."""
    value = signed_in.cookies[COOKIE].value
    return RequestFactory().get("/", HTTP_COOKIE=f"{COOKIE}={value}")


def run(middleware_request, view):
    return AuthSessionMiddleware(view)(middleware_request)


# --- the project's own views ----------------------------------------------------------------------
def test_a_login_required_view_sees_the_signed_in_user(signed_in):
    response = me(signed_in)
    assert response.status_code == 200
    assert response.json() == {"email": "ada@example.com"}


def test_a_login_required_view_redirects_a_caller_without_a_session(api, db):
    assert is_login_redirect(me(api))


def test_login_required_mixin_sees_the_signed_in_user(cookie_request, user):
    class Private(LoginRequiredMixin, View):
        def get(self, request):
            return HttpResponse(request.user.email)

    response = run(cookie_request, Private.as_view())
    assert response.content == b"ada@example.com"


def test_auth_session_is_the_session_row(cookie_request, signed_in):
    seen = {}

    def view(request):
        seen["session"] = request.auth_session
        return HttpResponse()

    run(cookie_request, view)
    assert seen["session"].token == signed_in.token
    assert seen["session"].user == signed_in.user


def test_auth_session_is_falsy_without_a_session(db):
    seen = {}

    def view(request):
        seen["session"] = request.auth_session
        return HttpResponse()

    run(RequestFactory().get("/"), view)
    assert not seen["session"]


# --- laziness -------------------------------------------------------------------------------------
def test_a_view_that_does_not_read_the_user_costs_no_query(cookie_request, django_assert_num_queries):
    with django_assert_num_queries(0):
        run(cookie_request, lambda request: HttpResponse())


def test_reading_the_user_costs_one_query(cookie_request, django_assert_num_queries):
    with django_assert_num_queries(1):
        run(cookie_request, lambda request: HttpResponse(request.user.email))


def test_reading_the_user_and_the_session_costs_one_query(cookie_request, django_assert_num_queries):
    def view(request):
        return HttpResponse(f"{request.user.email} {request.auth_session.token}")

    with django_assert_num_queries(1):
        run(cookie_request, view)


@pytest.mark.parametrize("read", [False, True])
def test_a_request_is_freed_without_the_garbage_collector(signed_in, read):
    # No reference cycle through the lazy user (it cost ~5 % of get-session's instructions).
    request = RequestFactory().get("/", HTTP_COOKIE=f"{COOKIE}={signed_in.cookies[COOKIE].value}")

    def view(request):
        return HttpResponse(request.user.email if read else "")

    run(request, view)
    gone = weakref.ref(request)
    del request
    assert gone() is None


def test_our_own_endpoints_do_not_pay_for_the_middleware(signed_in, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert signed_in.api_get("/ok").status_code == 200


def test_get_session_through_the_middleware_stays_one_query(signed_in, django_assert_num_queries):
    from authservice import users

    # A model without better-auth's fields reads them from its AuthProfile row: one query more.
    with django_assert_num_queries(2 if users.layout().needs_profile else 1):
        assert signed_in.api_get("/get-session").json()["user"]["email"] == "ada@example.com"


# --- no session -----------------------------------------------------------------------------------
def test_an_expired_session_is_anonymous(signed_in):
    Session.objects.filter(token=signed_in.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert is_login_redirect(me(signed_in))


def test_a_revoked_session_is_anonymous(signed_in):
    Session.objects.filter(token=signed_in.token).delete()
    assert is_login_redirect(me(signed_in))


def test_an_inactive_user_is_anonymous(signed_in):
    signed_in.user.is_active = False
    signed_in.user.save()
    assert is_login_redirect(me(signed_in))


def test_a_tampered_cookie_is_anonymous(signed_in):
    value = signed_in.cookies[COOKIE].value
    signed_in.cookies[COOKIE] = value[:5] + ("A" if value[5] != "A" else "B") + value[6:]
    assert is_login_redirect(me(signed_in))


def test_a_dead_session_cookie_is_cleared_on_the_way_out(signed_in):
    Session.objects.filter(token=signed_in.token).delete()
    assert me(signed_in).cookies[COOKIE]["max-age"] == 0


# --- refresh --------------------------------------------------------------------------------------
def test_a_session_due_for_refresh_gets_its_new_cookie_on_a_project_view(signed_in):
    now = timezone.now()
    Session.objects.filter(token=signed_in.token).update(expires_at=now + timedelta(days=1))
    response = me(signed_in)
    assert response.status_code == 200
    assert response.cookies[COOKIE]["max-age"] == 604800
    assert Session.objects.get(token=signed_in.token).expires_at > now + timedelta(days=6)


# --- caches (I10) ---------------------------------------------------------------------------------
def vary_of(response):
    return {value.strip().lower() for value in response.get("Vary", "").split(",") if value.strip()}


def test_a_view_that_read_the_user_varies_on_cookie(cookie_request):
    response = run(cookie_request, lambda request: HttpResponse(request.user.email))
    assert "cookie" in vary_of(response)


def test_a_view_that_read_the_session_varies_on_cookie_even_when_signed_out(signed_in):
    Session.objects.filter(token=signed_in.token).delete()
    assert "cookie" in vary_of(me(signed_in))


def test_a_view_that_did_not_read_the_user_does_not_vary(cookie_request):
    assert "cookie" not in vary_of(run(cookie_request, lambda request: HttpResponse()))


def test_with_bearer_tokens_on_a_view_that_read_the_user_varies_on_authorization(configure, cookie_request):
    configure(bearer={"enabled": True})
    response = run(cookie_request, lambda request: HttpResponse(request.user.email))
    assert {"cookie", "authorization"} <= vary_of(response)


def test_a_refreshed_session_cookie_makes_the_page_private(signed_in):
    Session.objects.filter(token=signed_in.token).update(expires_at=timezone.now() + timedelta(days=1))
    response = me(signed_in)
    assert COOKIE in response.cookies
    assert "private" in response["Cache-Control"]


def test_a_page_without_a_new_cookie_keeps_its_own_cache_control(cookie_request):
    def view(request):
        response = HttpResponse(request.user.email)
        response["Cache-Control"] = "max-age=60"
        return response

    assert run(cookie_request, view)["Cache-Control"] == "max-age=60"


# --- living with Django's own authentication -------------------------------------------------------
def test_without_our_cookie_django_s_session_user_is_kept(client, user):
    client.force_login(user)
    assert me(client).json() == {"email": "ada@example.com"}


def test_our_session_wins_over_django_s_session_user(signed_in, make_user):
    signed_in.force_login(make_user(email="grace@example.com"))
    assert me(signed_in).json() == {"email": "ada@example.com"}


def test_it_works_without_django_s_authentication_middleware(settings, signed_in):
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE
                           if m != "django.contrib.auth.middleware.AuthenticationMiddleware"]
    assert me(signed_in).json() == {"email": "ada@example.com"}


def test_without_django_s_middleware_a_caller_without_a_session_is_anonymous(settings, api, db):
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE
                           if m != "django.contrib.auth.middleware.AuthenticationMiddleware"]
    assert is_login_redirect(me(api))


def test_the_secure_cookie_name_is_read_behind_https(configure, make_user, db):
    configure(base_url="https://auth.example.com", trusted_origins=["https://auth.example.com"])
    make_user()
    client = ApiClient(origin="https://auth.example.com")
    response = client.api_post("/sign-in/email", {"email": "ada@example.com", "password": PASSWORD},
                               secure=True)
    assert "__Secure-auth.session_token" in response.cookies
    assert client.get("/me/", secure=True).json() == {"email": "ada@example.com"}
