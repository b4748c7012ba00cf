"""I10: a project page that reads ``request.user`` from authservice's session must not be stored in a
shared cache and served to someone else, with the victim's data or the victim's (refreshed) session
cookie.

Django's own session auth keeps a site-wide cache (``UpdateCacheMiddleware``/``FetchFromCacheMiddleware``)
and every HTTP cache safe: reading ``request.user`` touches ``request.session``, so ``SessionMiddleware``
adds ``Vary: Cookie``, and Django never caches a response that sets a cookie while varying on Cookie.
``AuthSessionMiddleware`` replaces that user but adds no ``Vary: Cookie`` (nor ``Vary: Authorization``
for a bearer), so a page rendered for the victim is cached under the URL alone, together with the
``Set-Cookie`` of a refreshed session, and the next anonymous visitor receives both.

Fix at the mechanism: when the lazy user or session was evaluated, the middleware patches
``Vary: Cookie`` (and ``Authorization`` when bearer is on), as ``SessionMiddleware`` does for
``request.session``; a response carrying a refreshed session cookie is also ``Cache-Control: private``.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from authservice.models import Session
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

COOKIE = "auth.session_token"


@pytest.fixture
def site_cache(settings):
    """Django's documented site-wide cache around the example project's middleware."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": "attack13-cache"}}
    settings.MIDDLEWARE = ["django.middleware.cache.UpdateCacheMiddleware", *settings.MIDDLEWARE,
                           "django.middleware.cache.FetchFromCacheMiddleware"]
    settings.CACHE_MIDDLEWARE_SECONDS = 600
    from django.core.cache import cache
    cache.clear()
    yield
    cache.clear()


def test_a_page_read_through_our_session_varies_on_cookie(signed_in):
    response = signed_in.get("/me/")
    assert response.status_code == 200
    vary = {value.strip().lower() for value in response.get("Vary", "").split(",")}
    assert "cookie" in vary, response.headers


def test_a_cached_page_of_the_victim_is_not_served_to_an_anonymous_visitor(site_cache, signed_in):
    assert signed_in.get("/me/").json() == {"email": "ada@example.com"}
    stranger = ApiClient(origin=None).get("/me/")
    assert stranger.status_code == 302, stranger.content  # the login redirect, not Ada's page


def test_a_refreshed_session_cookie_is_not_cached_for_a_stranger(site_cache, signed_in):
    Session.objects.update(expires_at=timezone.now() + timedelta(days=1))  # due for refresh
    victim = signed_in.get("/me/")
    assert COOKIE in victim.cookies  # the refresh wrote a new cookie
    stranger = ApiClient(origin=None).get("/me/")
    assert COOKIE not in stranger.cookies, "the victim's session cookie was served to a stranger"
