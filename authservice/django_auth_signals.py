"""Django's own auth signals (``django.contrib.auth.signals``), sent where our flows sign in and out.

Receivers written for Django's ``login()``, ``logout()`` and ``authenticate()`` then work unchanged:
Django's ``update_last_login`` sets ``last_login``, and lockout and audit apps (django-axes) see
sign-ins and failed passwords. ``user_logged_in`` is sent exactly when our ``user_signed_in`` is,
``user_logged_out`` when ``user_signed_out`` is. ``request`` is the Django request, or ``None`` for
an in-process call made without one.
"""

from typing import Any

from django.contrib.auth import signals


def logged_in(ctx: Any, user: Any) -> None:
    signals.user_logged_in.send(sender=user.__class__, request=ctx.request, user=user)


def logged_out(ctx: Any, user: Any) -> None:
    signals.user_logged_out.send(sender=user.__class__, request=ctx.request, user=user)


def login_failed(ctx: Any, email: str) -> None:
    """A wrong password or an unknown address at sign-in. Like Django's ``authenticate()``, the
    sender is a module name and the credentials never hold the password."""
    signals.user_login_failed.send(sender=__name__, credentials={"email": email}, request=ctx.request)
