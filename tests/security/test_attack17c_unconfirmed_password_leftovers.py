"""Attack 17c, what an unconfirmed password opened outlives its retirement (I1, pre-hijacking).

The rule (authservice/flows/email_proof.py): a password set before the first proof and never confirmed
by the prover is *unconfirmed*; it is retired, "with every session it could have opened", when a
provider's identity is later linked by address, and replaced by the victim's reset. The attack orders
the steps so that the pre-hijacker turns the unconfirmed password into something that is not a session
*between* the victim's proof and that retirement:

1. the attacker signs up with the victim's address and their own password (and may enrol TOTP);
2. the victim follows the verification mail in a browser with no session of the account (the proof;
   the password is kept, unconfirmed; the passkeys registered before it are retired);
3. the attacker signs in again with the kept password and registers a passkey, or starts a password
   sign-in and leaves it pending at the second factor;
4. the victim signs in with their provider (linked by address: the unconfirmed password is retired and
   every session revoked), or resets the password they never knew.

Secure behaviour: after step 4 nothing the unconfirmed password opened lets the attacker in: no passkey
registered from its sessions, no pending two-factor sign-in it started.
"""

import re

import pytest
from django.core import mail

from tests.conftest import PASSWORD, ApiClient
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, register, sign_in
from tests.peers.social import _stub_server, corp, sign_in_with_corp, stub  # noqa: F401
from tests.two_factor_support import code, enrol

pytestmark = pytest.mark.django_db
VICTIM = "ada@example.com"


def _password_sign_in(client=None):
    client = client or ApiClient()
    response = client.api_post("/sign-in/email", {"email": VICTIM, "password": PASSWORD})
    assert response.status_code == 200, response.content
    return client, response.json()


def _victim_follows_the_verification_mail_elsewhere():
    mail.outbox.clear()
    assert ApiClient().api_post("/send-verification-email", {"email": VICTIM}).status_code == 200
    token = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": token}).status_code == 200


def _victim_signs_in_with_their_provider(corp):  # noqa: F811
    victim = ApiClient()
    location = sign_in_with_corp(victim, corp, sub="sub-ada", email=VICTIM)["Location"]
    assert "error" not in location, location
    return victim


def _victim_resets_the_password():
    mail.outbox.clear()
    assert ApiClient().api_post("/request-password-reset", {"email": VICTIM}).status_code == 200
    token = re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)
    response = ApiClient().api_post("/reset-password", {"token": token, "newPassword": "victim pass 99"})
    assert response.status_code == 200, response.content


@pytest.fixture
def pre_hijacked():
    """Steps 1-2: signed up by the attacker with the victim's address, then proven by the victim elsewhere."""
    assert ApiClient().api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                                   "name": "Ada"}).status_code == 200
    _victim_follows_the_verification_mail_elsewhere()


@pytest.fixture
def attackers_passkey(pre_hijacked):
    """Step 3: back in with the kept, unconfirmed password, the attacker registers their own passkey."""
    attacker, _ = _password_sign_in()
    key = SoftAuthenticator(RP_ID, ORIGIN)
    assert register(attacker, key).status_code == 200
    return key


def _attacker_gets_in_with(key):
    later = ApiClient()
    answer = sign_in(later, key)
    session = later.api_get("/get-session").json()
    return answer.status_code, session


def test_a_passkey_registered_with_the_unconfirmed_password_dies_when_the_victims_provider_retires_it(
        attackers_passkey, corp):  # noqa: F811
    _victim_signs_in_with_their_provider(corp)
    status, session = _attacker_gets_in_with(attackers_passkey)
    assert session is None, f"passkey sign-in answered {status} and opened the victim's account"


def test_a_passkey_registered_with_the_unconfirmed_password_dies_when_the_victim_resets_it(attackers_passkey):
    _victim_resets_the_password()
    status, session = _attacker_gets_in_with(attackers_passkey)
    assert session is None, f"passkey sign-in answered {status} and opened the victim's account"


def test_a_passkey_registered_with_the_unconfirmed_password_then_signed_out_dies_with_it(pre_hijacked, corp):  # noqa: F811
    """The attacker ends the session they registered from, so no live session names the passkey."""
    attacker, _ = _password_sign_in()
    key = SoftAuthenticator(RP_ID, ORIGIN)
    assert register(attacker, key).status_code == 200
    assert attacker.api_post("/sign-out", {}).status_code == 200
    _victim_signs_in_with_their_provider(corp)
    status, session = _attacker_gets_in_with(key)
    assert session is None, f"passkey sign-in answered {status} and opened the victim's account"


@pytest.fixture
def pre_hijacked_with_two_factor():
    """Step 1 with TOTP enrolled by the attacker, then step 2: the factor stays with the kept password."""
    attacker = ApiClient()
    assert attacker.api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                                "name": "Ada"}).status_code == 200
    secret, _ = enrol(attacker)
    _victim_follows_the_verification_mail_elsewhere()
    return secret


def test_a_two_factor_sign_in_left_pending_with_the_unconfirmed_password_dies_with_it(
        pre_hijacked_with_two_factor, corp):  # noqa: F811
    secret = pre_hijacked_with_two_factor
    attacker, answer = _password_sign_in()
    assert answer.get("twoFactorRedirect") is True  # pending at the second factor, cookie held
    _victim_signs_in_with_their_provider(corp)  # the unconfirmed password is retired here
    finished = attacker.api_post("/two-factor/verify-totp", {"code": code(secret)})
    assert finished.status_code == 401, finished.content
    assert attacker.api_get("/get-session").json() is None
