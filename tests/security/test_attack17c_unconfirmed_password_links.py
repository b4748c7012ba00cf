"""Attack 17c, a provider identity linked with the unconfirmed password outlives its retirement (I1).

With ``account_linking.allow_different_emails`` on (documented, off by default): the attacker signs up
with the victim's address; the victim follows the verification mail elsewhere (the first proof: the
links made before it go, the password is kept, unconfirmed). Only *then* does the attacker sign in with
that kept password and /link-social their own identity (another address). The victim later signs in with
their provider (linked by address: the unconfirmed password and every session are retired), or resets the
password they never knew. The attacker's link was made after the proof, so nothing retires it, and
signing in with the attacker's identity opens the victim's account.

Secure behaviour: what the unconfirmed password set up goes with it, links included.
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
def attackers_link(db, corp, configure):  # noqa: F811
    configure(account_linking={"allow_different_emails": True})
    assert ApiClient().api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                                   "name": "Ada"}).status_code == 200
    mail.outbox.clear()
    assert ApiClient().api_post("/send-verification-email", {"email": VICTIM}).status_code == 200
    token = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": token}).status_code == 200  # the victim, elsewhere
    attacker = ApiClient()
    assert attacker.api_post("/sign-in/email", {"email": VICTIM, "password": PASSWORD}).status_code == 200
    assert attacker.api_post("/link-social", {"provider": "corp", "callbackURL": "/x"}).status_code == 200
    state = Verification.objects.exclude(identifier__startswith="reset").latest("created_at")
    corp.token_claims = corp.claims(json.loads(state.value)["idTokenNonce"], sub="sub-mallory",
                                    email="mallory@example.org")
    assert "error" not in callback(attacker, code="c", state=state.identifier)["Location"]
    assert Account.objects.filter(provider_id="corp", account_id="sub-mallory", user__email=VICTIM).exists()


def _attacker_signs_in_with_their_identity(corp):  # noqa: F811
    attacker = ApiClient()
    sign_in_with_corp(attacker, corp, sub="sub-mallory", email="mallory@example.org")
    return attacker.api_get("/get-session").json()


def test_a_link_made_with_the_unconfirmed_password_dies_when_the_victims_provider_retires_it(
        attackers_link, corp):  # noqa: F811
    victim = ApiClient()
    assert "error" not in sign_in_with_corp(victim, corp, sub="sub-ada", email=VICTIM)["Location"]
    session = _attacker_signs_in_with_their_identity(corp)
    assert session is None or session["user"]["email"] != VICTIM


def test_a_link_made_with_the_unconfirmed_password_dies_when_the_victim_resets_it(attackers_link, corp):  # noqa: F811
    mail.outbox.clear()
    assert ApiClient().api_post("/request-password-reset", {"email": VICTIM}).status_code == 200
    token = re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_post("/reset-password", {"token": token,
                                                    "newPassword": "victim pass 99"}).status_code == 200
    session = _attacker_signs_in_with_their_identity(corp)
    assert session is None or session["user"]["email"] != VICTIM
