"""The caller's session for a project's own views: resolved once per request, and only when asked.

Shared by :mod:`authservice.middleware` and :mod:`authservice.drf`, so a request that reaches a DRF
view through the middleware looks its session up once. The lookup is the endpoints' own
(:func:`authservice.flows.sessions.resolve_session`): the signed session cookie or, when enabled, a bearer
token; an expired session or an inactive user is no session.
"""

from typing import Any

from django.http import HttpRequest
from django.http.request import HttpHeaders

from authservice import bearer, cookies
from authservice.api.context import Context, Headers
from authservice.flows import sessions

_HOLDER = "_authservice_context"


class ContextHolder:
    """One request's :class:`Context`, built from its headers (cookies included) on first use.

    It holds the request's ``META`` (a plain dict), never the request: the middleware's lazy
    ``request.user`` keeps it and still works after the request is gone, and a request holding it is no
    reference cycle for the garbage collector to free (the cycle cost about 5 % of get-session's
    instructions, bench/README.md, although our endpoints never read ``request.user``). The context
    has no request either: the session lookup reads headers and cookies only.
    """

    __slots__ = ("_meta", "context")

    def __init__(self, meta: dict) -> None:
        self._meta = meta
        self.context: Context | None = None

    def get(self) -> Context:
        if self.context is None:
            self.context = Context(None, headers=Headers(HttpHeaders(self._meta)))
        return self.context

    def session(self) -> Any:
        """The caller's :class:`~authservice.flows.sessions.SessionInfo`, or ``None`` (see :func:`session_of`)."""
        return sessions.resolve_session(self.get())


def holder_of(request: HttpRequest) -> ContextHolder:
    """``request``'s :class:`ContextHolder` (one per request, shared by the middleware and DRF)."""
    holder = request.__dict__.get(_HOLDER)
    if holder is None:
        holder = request.__dict__[_HOLDER] = ContextHolder(request.META)
    return holder


def context_of(request: HttpRequest) -> Context:
    """The :class:`Context` of ``request`` (headers and cookies, the session once resolved)."""
    return holder_of(request).get()


def resolved_context(request: HttpRequest) -> Context | None:
    """The context, if this request has one (its session may or may not have been looked up)."""
    holder = request.__dict__.get(_HOLDER)
    return holder.context if holder is not None else None


def session_of(request: HttpRequest) -> Any:
    """The caller's :class:`~authservice.flows.sessions.SessionInfo`, or ``None``: one query, once.

    A session due for refresh is refreshed as get-session would; the new cookie is written by the
    middleware on the way out (the DRF class alone cannot write it, which is harmless: the client's
    next get-session does). Never raises: a session signed out concurrently, while being refreshed,
    is no session here (its cookie cleared); only our endpoints answer that with a 401.
    """
    return holder_of(request).session()


def carries_token(request: HttpRequest) -> bool:
    """Whether ``request`` names a session at all (no query, no signature check): a session cookie
    or an Authorization header. Without one the lookup is skipped and Django's own user kept."""
    if cookies.cookie_name(cookies.SESSION_TOKEN) in request.COOKIES:
        return True
    return bearer.enabled() and "authorization" in request.headers
