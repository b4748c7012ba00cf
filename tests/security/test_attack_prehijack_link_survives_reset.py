"""I1: a social identity the pre-hijacker linked does not survive the victim's password reset (attack b).

With ``account_linking.allow_different_emails`` on, the attacker signs up with the victim's address,
then links their own social identity (another address) to it with /link-social. The victim cannot sign
up, so they reset the password through their mailbox; the attacker's sessions ended, but the link
stayed, and signing in with the attacker's identity landed in the victim's account. The reset is the
first proof of the address: every link made before it is dropped (authservice/flows/email_proof.py).
"""

import json
import re

import pytest
from django.core import mail

from authservice.models import Account, Verification
from tests.conftest import PASSWORD, ApiClient
from tests.peers.social import _stub_server, callback, corp, sign_in_with_corp, stub  # noqa: F401

pytestmark = pytest.mark.django_db
VICTIM = "ada@example.com"


@pytest.fixture
def pre_hijacked(db, corp, configure):
    configure(account_linking={"allow_different_emails": True})
    attacker = ApiClient()
    assert attacker.api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                                "name": "Ada"}).status_code == 200
    assert attacker.api_post("/link-social", {"provider": "corp", "callbackURL": "/x"}).status_code == 200
    state = Verification.objects.exclude(identifier__startswith="reset").latest("created_at")
    corp.token_claims = corp.claims(json.loads(state.value)["idTokenNonce"], sub="sub-mallory",
                                    email="mallory@example.org")
    assert "error" not in callback(attacker, code="c", state=state.identifier)["Location"]
    assert Account.objects.filter(provider_id="corp", account_id="sub-mallory", user__email=VICTIM).exists()
    return attacker


def _victim_resets_the_password():
    mail.outbox.clear()
    assert ApiClient().api_post("/request-password-reset", {"email": VICTIM}).status_code == 200
    token = re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_post("/reset-password", {"token": token,
                                                    "newPassword": "victim pass 99"}).status_code == 200


def test_the_pre_hijackers_social_link_dies_with_the_victims_reset(pre_hijacked):
    _victim_resets_the_password()
    assert not Account.objects.filter(provider_id="corp", account_id="sub-mallory").exists()


def test_signing_in_with_the_pre_hijackers_identity_after_the_reset_is_not_the_victim(pre_hijacked, corp):
    _victim_resets_the_password()
    attacker = ApiClient()
    sign_in_with_corp(attacker, corp, sub="sub-mallory", email="mallory@example.org")
    session = attacker.api_get("/get-session").json()
    assert session is None or session["user"]["email"] != VICTIM
