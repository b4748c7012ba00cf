"""I7: the answer (status, body, every header but Date) is the same for a registered and an unknown
address, on every unauthenticated endpoint that takes an address, with the production mail backend
(``django_tasks_db``: the request only enqueues).

The attacker compares sign-in with a wrong password for: a password user, a social-only user (no
usable password), a deactivated user, a user whose address differs only in case, and nobody; reset
requests (both names) and send-verification-email for a verified user, an unverified one, an inactive
one and nobody; the 404/400 of reset links and verification tokens (unknown vs. another user's
expired token). Sign-up's 422 for a taken address is the wire contract (core.md §4.3) and is not
tested here.
"""

import pytest
from django.contrib.auth import get_user_model

from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db


def _answer(response):
    headers = {k.lower(): v for k, v in response.items() if k.lower() not in ("date",)}
    return response.status_code, response.content, headers, sorted(response.cookies.keys())


@pytest.fixture(autouse=True)
def production_queue(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


@pytest.fixture
def population(make_user):
    User = get_user_model()
    make_user(email="pw@example.com")
    make_user(email="verified@example.com", email_verified=True)
    social = User(email="social@example.com", name="S")
    social.set_unusable_password()
    social.save()
    make_user(email="inactive@example.com", is_active=False)
    return ["pw@example.com", "PW@example.com", "verified@example.com", "social@example.com",
            "inactive@example.com", "nobody@example.com"]


def test_sign_in_with_a_wrong_password_answers_the_same(population):
    answers = [_answer(ApiClient().api_post("/sign-in/email", {"email": e, "password": "wrong " + PASSWORD}))
               for e in population]
    assert len({(a[0], a[1], tuple(sorted(a[2].items())), tuple(a[3])) for a in answers}) == 1, answers


@pytest.mark.parametrize("path", ["/request-password-reset", "/forget-password", "/send-verification-email"])
def test_mail_endpoints_answer_the_same(population, path):
    answers = []
    for email in population:
        status, body, headers, cookies = _answer(ApiClient().api_post(path, {"email": email, "redirectTo": "/r",
                                                                            "callbackURL": "/c"}
                                                                      if path != "/send-verification-email"
                                                                      else {"email": email, "callbackURL": "/c"}))
        answers.append((status, body, tuple(sorted(headers.items())), tuple(cookies)))
    assert len(set(answers)) == 1, answers
