"""I1: pre-hijacking (Sudhodanan & Paverd 2022) against the default linking settings.

Second review. The attacker signs up with the victim's address and keeps the session. With the
default ``account_linking`` settings they try: to link their own social identity (another address)
to that account; to receive the victim's social sign-in into it while the address is unproven; and
to keep a change-e-mail link, asked for from the pre-hijacked session, alive after the victim proves
the mailbox by verifying it.
"""

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from authservice.models import Account, Session, Verification
from tests.conftest import PASSWORD, ApiClient
from tests.peers.social import _stub_server, callback, corp, sign_in_with_corp, stub  # noqa: F401

pytestmark = pytest.mark.django_db
VICTIM = "ada@example.com"


@pytest.fixture
def attacker(db):
    client = ApiClient()
    assert client.api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                              "name": "Ada"}).status_code == 200
    return client


def test_pre_hijacker_cannot_link_a_social_identity_of_another_address(attacker, corp):
    assert attacker.api_post("/link-social", {"provider": "corp", "callbackURL": "/x"}).status_code == 200
    state = Verification.objects.exclude(identifier__startswith="reset").latest("created_at")
    nonce = json.loads(state.value)["idTokenNonce"]
    corp.token_claims = corp.claims(nonce, sub="sub-mallory", email="mallory@example.org")
    location = callback(attacker, code="c", state=state.identifier)["Location"]
    assert "error=" in location
    assert not Account.objects.filter(provider_id="corp").exists()


def test_victims_social_sign_in_is_not_merged_into_an_unproven_account(attacker, api, corp):
    user = get_user_model().objects.get(email=VICTIM)
    sessions_before = Session.objects.filter(user=user).count()
    location = sign_in_with_corp(api, corp, sub="sub-ada", email=VICTIM)["Location"]
    assert "error=account_not_linked" in location
    assert not Account.objects.filter(provider_id="corp").exists()
    assert Session.objects.filter(user=user).count() == sessions_before


def test_change_link_asked_for_by_the_pre_hijacker_dies_when_the_victim_verifies(attacker):
    mail.outbox.clear()
    assert attacker.api_post("/change-email", {"newEmail": "mallory@example.org"}).status_code == 200
    change = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    mail.outbox.clear()
    assert ApiClient().api_post("/send-verification-email", {"email": VICTIM}).status_code == 200
    verify = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": verify}).status_code == 200
    response = attacker.api_get("/verify-email", {"token": change})
    assert response.status_code == 401
    assert get_user_model().objects.filter(email=VICTIM).exists()
