"""A WSGI application whose authservice API requests skip the middleware they never use.

``authservice.wsgi.application()`` wraps the project's WSGI application: a request under the API's base
path (``AUTHSERVICE["base_path"]``, ``/api/auth/...``) goes to a second Django handler built with the
project's ``MIDDLEWARE`` minus :data:`NOT_ON_THE_API`; every other request (the admin, the project's
own views) goes through the full stack as before.

Why: get-session does one indexed lookup, and on it the middleware stack was a fifth of the CPU
(bench/README.md, issue 18). The middleware dropped here has nothing to do on the API:

- Django's sessions, ``AuthenticationMiddleware``, authservice's ``AuthSessionMiddleware`` and messages
  set lazy attributes our endpoints never read (they resolve the session cookie themselves), and write
  nothing unless those are read;
- ``CsrfViewMiddleware``: every endpoint is ``csrf_exempt`` and checks the Origin itself (I3), and none
  asks for a CSRF token, so it neither refuses nor sets anything there;
- WhiteNoise serves ``STATIC_URL``, never the API's path.

Everything else stays, in the project's order: security headers, CORS (preflights and the allowed
origins' headers), ``CommonMiddleware`` (Content-Length), ``X-Frame-Options``, and any middleware of the
project's own that this module does not know. URL resolution is remembered per path where it depends
on nothing else (authservice/url_memo.py). The answers are the same bytes either way
(tests/test_wsgi_api_path.py).
"""

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from authservice import url_memo

NOT_ON_THE_API = frozenset({
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "authservice.middleware.AuthSessionMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
})


class _Handler(WSGIHandler):
    """Django's WSGI handler with its own middleware list instead of settings.MIDDLEWARE."""

    def __init__(self, middleware):
        self._middleware = list(middleware)
        super().__init__()

    def resolve_request(self, request):
        # BaseHandler.resolve_request, with the match remembered per path where that is the same
        # answer (authservice/url_memo.py); a request with its own urlconf keeps Django's.
        if hasattr(request, "urlconf"):
            return super().resolve_request(request)
        request.resolver_match = url_memo.resolve(get_resolver(), request.path_info)
        return request.resolver_match

    def load_middleware(self, is_async=False):
        # BaseHandler.load_middleware reads settings.MIDDLEWARE; this runs once, at start-up.
        everything = settings.MIDDLEWARE
        settings.MIDDLEWARE = self._middleware
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = everything


def api_middleware():
    """The project's MIDDLEWARE without what the API never uses, in the project's order."""
    return [path for path in settings.MIDDLEWARE if path not in NOT_ON_THE_API]


def application(site=None):
    """The project's WSGI application (``site``, by default Django's) with the lean API path in front."""
    site = site or get_wsgi_application()  # sets Django up first
    from authservice import app_settings

    api = _Handler(api_middleware())
    prefix = app_settings.base_path.rstrip("/") + "/"

    def dispatch(environ, start_response):
        handler = api if environ.get("PATH_INFO", "").startswith(prefix) else site
        return handler(environ, start_response)

    return dispatch
