"""I1 / I9: control over another user's account through the core app's own-account endpoints.

Second review. The attacker holds an ordinary account and can make a signed-in victim's browser open
links. They try: to move their profile onto the victim (update-user naming ``email``, ``emailVerified``,
``id``); to delete the victim's account with the attacker's own deletion link opened in the victim's
browser (and to burn the victim's link by guessing it from the attacker's session); to use a change-
e-mail link of one account as a plain verification of another; and to reuse an applied change link.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from authservice.models import Verification
from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db


def _sign_in(email):
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": email, "password": PASSWORD}).status_code == 200
    return client


@pytest.fixture
def people(make_user):
    victim = make_user(email="victim@example.com", email_verified=True)
    attacker = make_user(email="mallory@example.com", email_verified=True)
    return victim, attacker


def test_update_user_cannot_take_the_victims_address_or_identity(people):
    victim, attacker = people
    client = _sign_in(attacker.email)
    for body in ({"name": "M", "email": victim.email}, {"name": "M", "emailVerified": True, "id": victim.pk},
                 {"name": "M", "isActive": True, "is_superuser": True, "is_staff": True}):
        client.api_post("/update-user", body)
    mallory = get_user_model().objects.get(pk=attacker.pk)
    assert mallory.email == "mallory@example.com" and not mallory.is_superuser and not mallory.is_staff
    assert client.api_get("/get-session").json()["user"]["id"] == attacker.pk


def test_attackers_deletion_link_opened_in_the_victims_browser_deletes_nobody(people, configure):
    victim, attacker = people
    configure(delete_user={"enabled": True, "send_delete_verification": True})
    mallory = _sign_in(attacker.email)
    mail.outbox.clear()
    assert mallory.api_post("/delete-user", {}).status_code == 200
    token = re.search(r"token=([a-z0-9]+)", mail.outbox[-1].body).group(1)
    browser = _sign_in(victim.email)
    response = browser.api_get("/delete-user/callback", {"token": token})
    assert response.status_code == 404
    assert get_user_model().objects.filter(pk=victim.pk).exists()
    # ...and the attacker's own link still works for the attacker only (nothing was burnt).
    assert Verification.objects.filter(identifier=f"delete-account-{token}").exists()


def test_guessing_the_victims_deletion_token_from_another_session_does_not_burn_it(people, configure):
    victim, attacker = people
    configure(delete_user={"enabled": True, "send_delete_verification": True})
    owner = _sign_in(victim.email)
    mail.outbox.clear()
    assert owner.api_post("/delete-user", {}).status_code == 200
    token = re.search(r"token=([a-z0-9]+)", mail.outbox[-1].body).group(1)
    mallory = _sign_in(attacker.email)
    assert mallory.api_post("/delete-user", {"token": token}).status_code == 404
    assert get_user_model().objects.filter(pk=victim.pk).exists()
    assert get_user_model().objects.filter(pk=attacker.pk).exists()
    assert Verification.objects.filter(identifier=f"delete-account-{token}").exists()


def test_applied_change_link_is_single_use_and_cannot_verify_another_account(people):
    victim, attacker = people
    mallory = _sign_in(attacker.email)
    mail.outbox.clear()
    assert mallory.api_post("/change-email", {"newEmail": "m2@example.com"}).status_code == 200
    token = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert mallory.api_get("/verify-email", {"token": token}).status_code == 200
    assert get_user_model().objects.get(pk=attacker.pk).email == "m2@example.com"
    # Applied once: the same link again, anywhere, changes nothing and opens no session.
    again = ApiClient()
    response = again.api_get("/verify-email", {"token": token})
    assert response.status_code == 401
    assert again.api_get("/get-session").json() is None
    # Opened in the victim's browser it neither moves nor signs the victim's browser into anything.
    browser = _sign_in(victim.email)
    assert browser.api_get("/verify-email", {"token": token}).status_code == 401
    assert browser.api_get("/get-session").json()["user"]["id"] == victim.pk
    assert get_user_model().objects.get(pk=victim.pk).email == "victim@example.com"
