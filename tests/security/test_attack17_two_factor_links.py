"""Attack 17: a mailed link (the mailbox, one factor) opens no session for a user with 2FA."""

import pytest

from authservice import users
from authservice.flows.verification import make_token
from authservice.models import Session
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


def test_auto_sign_in_after_verification_skips_a_user_with_two_factor(make_user, configure):
    configure(email_verification={"auto_sign_in_after_verification": True})
    user = make_user(email="ada@example.com")
    users.set_two_factor_enabled(user, True)
    attacker = ApiClient()
    response = attacker.api_get("/verify-email", {"token": make_token(user.email)})
    assert response.status_code == 200
    assert users.is_email_verified(type(user).objects.get(pk=user.pk)) is True
    assert not Session.objects.filter(user=user).exists()
    assert attacker.api_get("/get-session").json() is None


def test_a_change_email_link_opens_no_session_for_a_user_with_two_factor(make_user):
    user = make_user(email="ada@example.com")
    users.set_two_factor_enabled(user, True)
    attacker = ApiClient()
    token = make_token(user.email, update_to="ada.new@example.com", request_type="change-email-verification",
                       user=user)
    attacker.api_get("/verify-email", {"token": token})
    assert users.email_of(type(user).objects.get(pk=user.pk)) == "ada.new@example.com"
    assert not Session.objects.filter(user=user).exists()
