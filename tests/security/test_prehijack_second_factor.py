"""Pre-hijacking with a second factor (I1): a TOTP factor, backup codes and trusted devices set up on an
unproven account by whoever signed up with the victim's address end at the owner's first proof of the
mailbox, as the pre-hijacker's sessions, links and passkeys do (authservice/flows/email_proof.py)."""

import re

import pytest
from django.core import mail

from authservice import users
from authservice.models import BackupCode, TrustedDevice, TwoFactor
from tests.conftest import PASSWORD, ApiClient
from tests.two_factor_support import enrol

pytestmark = pytest.mark.django_db
VICTIM = "victim@example.com"


@pytest.fixture
def pre_hijacker():
    client = ApiClient()
    assert client.api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                              "name": "Victim"}).status_code == 200
    enrol(client)
    return client


def _victim_resets_the_password():
    assert ApiClient().api_post("/request-password-reset", {"email": VICTIM}).status_code == 200
    token = re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_post("/reset-password", {"token": token, "newPassword": "victim pass 99"}).status_code == 200


def test_a_pre_hijackers_second_factor_is_gone_after_the_owner_resets_the_password(pre_hijacker):
    _victim_resets_the_password()
    user = users.find_by_email(VICTIM)
    assert not users.two_factor_enabled_of(user)
    assert not TwoFactor.objects.filter(user=user).exists()
    assert not BackupCode.objects.filter(user=user).exists()
    assert not TrustedDevice.objects.filter(user=user).exists()


def test_the_owner_signs_in_with_the_new_password_and_no_pre_hijackers_code(pre_hijacker):
    _victim_resets_the_password()
    owner = ApiClient()
    response = owner.api_post("/sign-in/email", {"email": VICTIM, "password": "victim pass 99"})
    assert response.status_code == 200 and "twoFactorRedirect" not in response.json()
    assert owner.api_get("/get-session").json()["user"]["email"] == VICTIM


def test_a_verified_owners_second_factor_survives_their_own_reset(make_user):
    make_user(email=VICTIM, email_verified=True)
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": VICTIM, "password": PASSWORD}).status_code == 200
    enrol(client)
    _victim_resets_the_password()
    assert users.two_factor_enabled_of(users.find_by_email(VICTIM))


def test_a_verification_link_followed_elsewhere_keeps_the_factor_with_the_password_it_guards(pre_hijacker):
    """The link keeps the password set before it (unconfirmed), so the factor stays with it: retiring it
    would let the mailbox alone past a real user's second factor, and cost a pre-hijacker nothing."""
    mail.outbox.clear()
    assert ApiClient().api_post("/send-verification-email", {"email": VICTIM}).status_code == 200
    token = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": token}).status_code == 200
    assert users.two_factor_enabled_of(users.find_by_email(VICTIM))
