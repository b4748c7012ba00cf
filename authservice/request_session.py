"""The caller's session for a project's own views: resolved once per request, and only when asked.

Shared by :mod:`authservice.middleware` and :mod:`authservice.drf`, so a request that reaches a DRF
view through the middleware looks its session up once. The lookup is the endpoints' own
(:func:`authservice.flows.sessions.resolve_session`): the signed session cookie or, when enabled, a bearer
token; an expired session or an inactive user is no session.
"""

from typing import Any

from django.http import HttpRequest

from authservice import bearer, cookies
from authservice.api.context import Context, Headers
from authservice.flows import sessions

_CONTEXT = "_authservice_context"


def context_of(request: HttpRequest) -> Context:
    """The :class:`Context` of ``request`` (headers and cookies, the session once resolved)."""
    ctx = request.__dict__.get(_CONTEXT)
    if ctx is None:
        ctx = Context(None, headers=Headers(request.headers), request=request)
        request.__dict__[_CONTEXT] = ctx
    return ctx


def resolved_context(request: HttpRequest) -> Context | None:
    """The context, if this request has one (its session may or may not have been looked up)."""
    return request.__dict__.get(_CONTEXT)


def session_of(request: HttpRequest) -> Any:
    """The caller's :class:`~authservice.flows.sessions.SessionInfo`, or ``None``: one query, once.

    A session due for refresh is refreshed as get-session would; the new cookie is written by the
    middleware on the way out (the DRF class alone cannot write it, which is harmless: the client's
    next get-session does). Never raises: a session signed out concurrently, while being refreshed,
    is no session here (its cookie cleared); only our endpoints answer that with a 401.
    """
    return sessions.resolve_session(context_of(request))


def carries_token(request: HttpRequest) -> bool:
    """Whether ``request`` names a session at all (no query, no signature check): a session cookie
    or an Authorization header. Without one the lookup is skipped and Django's own user kept."""
    if cookies.cookie_name(cookies.SESSION_TOKEN) in request.COOKIES:
        return True
    return bearer.enabled() and "authorization" in request.headers
