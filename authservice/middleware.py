"""``request.user`` and ``request.auth_session`` from authservice's session, for a project's own views.

Add it after Django's ``AuthenticationMiddleware`` (which would otherwise overwrite ``request.user``),
or instead of it::

    MIDDLEWARE = [
        ...,
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        "authservice.middleware.AuthSessionMiddleware",
    ]

Then ``@login_required``, ``LoginRequiredMixin``, ``{{ user }}`` in templates and ``request.user`` see
whoever the ``auth.session_token`` cookie (or, when enabled, the bearer token) signs in.

Both attributes are lazy: a request that reads neither costs nothing (our own endpoints never read
them), one that reads either costs the one indexed query get-session costs. ``request.auth_session``
is the :class:`~authservice.models.Session` row, or a lazy ``None`` when signed out: test it with
``if request.auth_session:``, never ``is None``.

A request without our cookie keeps the user Django's session gave it (an admin signed in through
``/admin/``); so does one whose cookie names no live session. An expired session, a revoked one, an
inactive user and a cookie whose signature does not verify are all no session (``AnonymousUser``).
A session due for refresh is refreshed, its new cookie written on the response, as get-session does.

A session whose user must still enrol a second factor (``two_factor.required_for``, docs/mfa.md) is
not signed in here either: ``request.user`` is ``AnonymousUser`` and ``request.auth_session`` ``None``, so
a staff user cannot reach the project's views or admin with a password alone. Such a request has
``request.auth_enrolment_pending`` true (a lazy bool), for a view that sends them to enrol.

Caches: a response that looked the session up depends on the cookie (and, with bearer tokens on, on
the Authorization header), so it gets ``Vary: Cookie`` (``, Authorization``), as Django's
``SessionMiddleware`` adds when ``request.session`` is read; without it Django's site-wide cache or a
shared HTTP cache would serve one user's page to the next visitor. One on which we write a session
cookie is also ``Cache-Control: private``: no shared cache stores someone's session token.
"""

import functools
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject

from authservice import request_session
from authservice.api import render


class AuthSessionMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request_session.carries_token(request):
            _install(request)
        else:
            _signed_out(request)
        response = self.get_response(request)
        ctx = request_session.resolved_context(request)
        if ctx is None:
            return response
        if ctx.response_cookies:
            # A refreshed (or a cleared, dead) session cookie; what the view set itself wins.
            render.apply_cookies(ctx, response, keep_existing=True)
        render.keep_out_of_shared_caches(ctx, response)
        return response


def _signed_out(request: Any) -> None:
    if not hasattr(request, "user"):  # Django's AuthenticationMiddleware is not installed
        request.user = AnonymousUser()
    request.auth_session = None
    request.auth_enrolment_pending = False


def _install(request: Any) -> None:
    # The lazy objects close over the request's ContextHolder, never the request: closures over the
    # request, stored on it, would make each request a reference cycle that only the garbage collector
    # frees (about 5 % of get-session's instructions, bench/README.md, although our endpoints never
    # read them); and a weak reference would die with the request, breaking a request.user kept past it.
    previous = request.__dict__.get("user")  # Django's own (lazy) user, if its middleware ran
    holder = request_session.holder_of(request)
    request.user = SimpleLazyObject(functools.partial(_user_of, holder, previous))
    request.auth_session = SimpleLazyObject(functools.partial(_session_of, holder))
    request.auth_enrolment_pending = SimpleLazyObject(functools.partial(_pending_of, holder))
    request.auser = functools.partial(_auser_of, holder, previous)


def _user_of(holder: request_session.ContextHolder, previous: Any) -> Any:
    found = holder.session()
    if found is not None:
        # Not Django's own user either: the browser presented our session, which opens nothing yet.
        return AnonymousUser() if found.enrolment_pending else found.user
    return previous if previous is not None else AnonymousUser()


def _session_of(holder: request_session.ContextHolder) -> Any:
    found = holder.session()
    return found.session if found is not None and not found.enrolment_pending else None


def _pending_of(holder: request_session.ContextHolder) -> bool:
    found = holder.session()
    return bool(found is not None and found.enrolment_pending)


async def _auser_of(holder: request_session.ContextHolder, previous: Any) -> Any:
    return await sync_to_async(_user_of)(holder, previous)
