"""I1: a pre-hijacker's password does not survive the victim proving the address (attack a).

Pre-hijacking (Sudhodanan & Paverd 2022), the "classic-federated merge": the attacker signs up with the
victim's address and their own password. The victim follows the verification mail (in a browser with no
session of that account: the attacker asked for it), which makes the account verified, so the victim's
later social sign-in links into it by address. Before the fix the attacker's password still signed in.
The rule (authservice/flows/email_proof.py): a password set before the proof and never confirmed by the
prover is retired when a provider's identity is linked by address, and at the first proof every other
session ends.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from authservice import users
from authservice.models import Account
from tests.conftest import PASSWORD, ApiClient
from tests.peers.social import _stub_server, corp, sign_in_with_corp, stub  # noqa: F401

pytestmark = pytest.mark.django_db
VICTIM = "ada@example.com"


def _sign_in_by_password(client):
    return client.api_post("/sign-in/email", {"email": VICTIM, "password": PASSWORD})


@pytest.fixture
def attacker(db):
    client = ApiClient()
    assert client.api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                              "name": "Ada"}).status_code == 200
    return client


def _victim_follows_the_verification_mail(attacker):
    mail.outbox.clear()
    assert attacker.api_post("/send-verification-email", {"email": VICTIM}).status_code == 200
    token = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": token}).status_code == 200


def test_the_pre_hijackers_session_ends_when_the_victim_verifies_the_address(attacker):
    _victim_follows_the_verification_mail(attacker)
    assert attacker.api_get("/get-session").json() is None


def test_the_pre_hijackers_password_dies_when_the_victims_social_sign_in_links_into_the_account(attacker, corp):
    _victim_follows_the_verification_mail(attacker)
    # Back in with the password they chose, before the victim comes.
    assert _sign_in_by_password(attacker).status_code == 200
    victim = ApiClient()
    location = sign_in_with_corp(victim, corp, sub="sub-ada", email=VICTIM)["Location"]
    assert "error" not in location
    assert Account.objects.filter(provider_id="corp", user__email=VICTIM).exists()
    response = _sign_in_by_password(ApiClient())
    assert (response.status_code, response.json()["code"]) == (401, "INVALID_EMAIL_OR_PASSWORD")
    assert attacker.api_get("/get-session").json() is None
    assert victim.api_get("/get-session").json()["user"]["email"] == VICTIM


def test_change_password_does_not_make_the_pre_hijackers_password_the_owners(attacker, corp):
    _victim_follows_the_verification_mail(attacker)
    assert _sign_in_by_password(attacker).status_code == 200
    assert attacker.api_post("/change-password", {"currentPassword": PASSWORD,
                                                  "newPassword": "still mallory 1"}).status_code == 200
    sign_in_with_corp(ApiClient(), corp, sub="sub-ada", email=VICTIM)
    response = ApiClient().api_post("/sign-in/email", {"email": VICTIM, "password": "still mallory 1"})
    assert response.status_code == 401


def test_a_provider_vouching_for_an_unproven_account_retires_the_pre_hijackers_password(attacker, corp, configure):
    # A deployment that links into unverified accounts: the provider's word is the first proof.
    configure(account_linking={"require_local_email_verified": False})
    location = sign_in_with_corp(ApiClient(), corp, sub="sub-ada", email=VICTIM)["Location"]
    assert "error" not in location
    assert users.is_email_verified(get_user_model().objects.get(email=VICTIM))
    assert _sign_in_by_password(ApiClient()).status_code == 401
    assert attacker.api_get("/get-session").json() is None


def test_an_account_moved_onto_the_victims_address_keeps_nothing_of_the_mover_once_the_victim_proves_it(corp):
    """The same attack through change-e-mail: the attacker moves their own account onto the victim's
    address; the victim follows the mail that asks them to confirm it, then signs in with their provider."""
    attacker = ApiClient()
    assert attacker.api_post("/sign-up/email", {"email": "mallory@evil.test", "password": PASSWORD,
                                                "name": "M"}).status_code == 200
    mail.outbox.clear()
    assert attacker.api_post("/change-email", {"newEmail": VICTIM}).status_code == 200
    token = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": token}).status_code == 200
    assert get_user_model().objects.filter(email=VICTIM).exists()
    assert attacker.api_get("/get-session").json() is None
    sign_in_with_corp(ApiClient(), corp, sub="sub-ada", email=VICTIM)
    assert _sign_in_by_password(ApiClient()).status_code == 401
