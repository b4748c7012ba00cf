"""Attack 17c: the in-process API hands host code a full session of a user still to enrol.

``two_factor.required_for`` makes a password-only session of a staff member *enrolment pending*:
every endpoint but an allow-list answers 403, and the middleware's ``request.user`` and DRF see
nobody. ``get-session`` is on the allow-list (the SPA must learn it is signed in to show the enrolment
page), and it answers exactly as for any session: no field says the session opens nothing.

docs/python-api.md tells host code to ask ``auth.api.get_session(headers=request.headers)`` who the
caller is. A host view that does (the documented way; a view outside the middleware, a Celery task
holding forwarded headers, a gateway) sees the staff user, signed in, with the password alone: the
policy meant to refuse exactly that is invisible where two mechanisms meet.

Invariant: I1 (``required_for``: a password alone opens nothing but enrolment). Secure behaviour: the
answer says the session is pending (a flag in ``session``, as better-auth plugins add fields), or
in-process callers get ``None`` as ``request.user`` gets AnonymousUser. The test accepts either.
"""

import pytest

from tests.two_factor_support import pending, staff, staff_required  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def _headers_of(client):
    return {"cookie": "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())}


def _says_pending(session):
    return any(("enrol" in key.lower() or "enroll" in key.lower()) and value is True
               for key, value in session.items())


def test_get_session_in_process_does_not_pass_a_pending_session_off_as_signed_in(pending):
    from authservice import auth

    answer = auth.api.get_session(headers=_headers_of(pending))
    assert answer is None or _says_pending(answer["session"]), answer


def test_the_http_answer_tells_the_spa_too(pending):
    answer = pending.api_get("/get-session").json()
    assert answer is None or _says_pending(answer["session"]), answer
