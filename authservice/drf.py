"""A Django REST framework authentication class for a project's own APIs::

    REST_FRAMEWORK = {
        "DEFAULT_AUTHENTICATION_CLASSES": ["authservice.drf.SessionTokenAuthentication"],
    }

It authenticates whoever the session cookie (or, when enabled, the bearer token) names, as our
endpoints do; ``request.auth`` is the :class:`~authservice.models.Session`. It replaces DRF's
``SessionAuthentication`` and its CSRF token with our endpoints' defence: an unsafe method
(POST, PUT, PATCH, DELETE) that sends cookies must come from a trusted Origin, else 403 with
``MISSING_OR_NULL_ORIGIN`` or ``INVALID_ORIGIN``. A request that sends no cookie carries no ambient
credential (a bearer token only), so the Origin does not matter to it.

No session: ``None`` (the next class may try); a view that needs one answers 401 with
``WWW-Authenticate`` (see :meth:`authenticate_header`). A session whose user must still enrol a second
factor (``two_factor.required_for``, docs/mfa.md) counts as none.
"""

from typing import Any

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from authservice import bearer, request_session
from authservice.api import guards
from authservice.errors import APIError

SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")


class OriginRefused(exceptions.PermissionDenied):
    """403: a cookie-carrying write from an untrusted or missing Origin."""


class SessionTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        django_request = request._request
        if not request_session.carries_token(django_request):
            return None
        found = request_session.session_of(django_request)
        if found is None or found.enrolment_pending:
            return None
        if request.method not in SAFE_METHODS:
            try:
                # The endpoints' own check: it applies whenever the request sends cookies, so a bearer
                # header cannot carry a cookie's session past it.
                guards.check_origin(request_session.context_of(django_request))
            except APIError as error:
                raise OriginRefused(detail=error.message, code=error.code) from None
        return found.user, found.session

    def authenticate_header(self, request: Request) -> str:
        """A value makes DRF answer an unauthenticated request 401 (with it), not 403."""
        return 'Bearer realm="api"' if bearer.enabled() else 'Session realm="api"'
