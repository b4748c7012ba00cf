"""Attack 13b: the middleware's lazy ``request.user`` dies with the request (since 7b55a49).

The lazy user and session reach the request through ``weakref.ref(request)``. When
``AuthSessionMiddleware`` runs instead of Django's ``AuthenticationMiddleware`` (which the docstring
allows; Django's lazy user would otherwise keep the request alive through its closure), a view that
hands the still-lazy ``request.user`` to work that outlives the request (a thread, a queued callback,
an audit object, a cached value) gets ``AttributeError: 'NoneType' object has no attribute
'__dict__'`` on first use instead of the user; ``getattr(user, "is_authenticated", False)`` says False.
No wrong user is ever produced (fail-closed), so this is low severity: a correctness regression.

Fix at the mechanism: resolve the session through a context object that the lazy objects hold
strongly (the per-request Context, which does not reference the request once it has copied headers
and cookies), or make ``_user_of`` with a dead request raise a clear error; do not let a dead weak
reference flow into ``context_of(None)``.
"""

import gc

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from authservice.middleware import AuthSessionMiddleware

pytestmark = pytest.mark.django_db


def test_a_lazy_user_kept_past_the_request_is_still_the_signed_in_user(signed_in):
    cookie = signed_in.cookies["auth.session_token"].value
    request = RequestFactory().get("/me/", HTTP_COOKIE=f"auth.session_token={cookie}")
    kept = {}

    def view(req):
        kept["user"] = req.user  # e.g. handed to a thread or an on_commit callback
        return HttpResponse("ok")

    AuthSessionMiddleware(view)(request)
    del request
    gc.collect()
    assert kept["user"].pk == signed_in.user.pk
