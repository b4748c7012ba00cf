"""Attack 17 (policy): the attacker owns the victim's mailbox (one factor) and resets the password, hoping
the reset turns 2FA off or signs them in. It does neither: the next sign-in still asks for the code."""

import pytest

from authservice import users
from authservice.models import Session, TwoFactor
from tests.conftest import ApiClient
from tests.test_password_reset import NEW_PASSWORD, issue_token
from tests.two_factor_support import enrolled, pending, staff, staff_required  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


@pytest.fixture
def verified(enrolled):
    """``enrolled`` with a proven address. A reset of a never-proven one is that address's first proof,
    which retires a factor set up before it (a pre-hijacker's: tests/security/test_prehijack_second_factor.py)."""
    users.update(enrolled.user, email_verified=True)
    return enrolled


def reset(user):
    attacker = ApiClient()
    response = attacker.api_post("/reset-password", {"newPassword": NEW_PASSWORD, "token": issue_token(user)})
    assert response.status_code == 200, response.content
    return attacker


def test_a_reset_leaves_two_factor_on(verified):
    reset(verified.user)
    assert users.two_factor_enabled_of(type(verified.user).objects.get(pk=verified.user.pk)) is True
    assert TwoFactor.objects.filter(user=verified.user, verified=True).exists()


def test_a_reset_issues_no_session(enrolled):
    Session.objects.all().delete()
    attacker = reset(enrolled.user)
    assert not Session.objects.filter(user=enrolled.user).exists()
    assert attacker.api_get("/get-session").json() is None


def test_the_new_password_still_needs_the_second_factor(verified):
    attacker = reset(verified.user)
    response = attacker.api_post("/sign-in/email", {"email": verified.user.email, "password": NEW_PASSWORD})
    assert response.json()["twoFactorRedirect"] is True


def test_a_reset_of_a_user_still_to_enrol_opens_nothing_beyond_enrolment(pending):
    attacker = reset(pending.user)
    response = attacker.api_post("/sign-in/email", {"email": pending.user.email, "password": NEW_PASSWORD})
    assert response.status_code == 200
    listed = attacker.api_get("/list-sessions")
    assert listed.status_code == 403 and listed.json()["code"] == "TWO_FACTOR_ENROLLMENT_REQUIRED"
