"""Attack 17b, pre-hijacking with a passkey (Sudhodanan & Paverd 2022), I1.

The attacker signs up with the victim's address (nobody verifies it). The fresh session that sign-up
gives is enough to register a passkey on the attacker's own authenticator. The victim cannot sign up
(the address is taken), so they take the account over through a password reset: the first proof of
the mailbox. That reset ends every session of the unverified account
(tests/security/test_prehijack_sessions_die_on_reset.py), but a passkey is a credential that outlives
sessions: the attacker signs in with it and holds a session of the victim's account again.

What an earlier, unproven holder of the account kept must end with the first proof of the mailbox: the
passkeys registered before the address was verified go with its sessions.
"""

import re

import pytest
from django.core import mail

from authservice.models import Passkey
from tests.conftest import PASSWORD, ApiClient
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, register, sign_in

pytestmark = pytest.mark.django_db
VICTIM = "victim@example.com"


@pytest.fixture
def pre_hijacker():
    """``(client, authenticator)``: signed up with the victim's address, a passkey registered."""
    client = ApiClient()
    assert client.api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                              "name": "Victim"}).status_code == 200
    authenticator = SoftAuthenticator(RP_ID, ORIGIN)
    assert register(client, authenticator).status_code == 200
    return client, authenticator


def _victim_resets_the_password():
    assert ApiClient().api_post("/request-password-reset", {"email": VICTIM}).status_code == 200
    token = re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)
    response = ApiClient().api_post("/reset-password", {"token": token, "newPassword": "victim pass 99"})
    assert response.status_code == 200, response.content


def test_a_pre_hijackers_passkey_signs_nobody_in_after_the_owner_resets_the_password(pre_hijacker):
    _, authenticator = pre_hijacker
    _victim_resets_the_password()
    thief = ApiClient()
    response = sign_in(thief, authenticator)
    assert response.status_code in (400, 401), response.content
    assert thief.api_get("/get-session").json() is None


def test_a_reset_of_an_unverified_account_removes_the_passkeys_registered_before_it(pre_hijacker):
    _victim_resets_the_password()
    assert not Passkey.objects.filter(user__email=VICTIM).exists()


def _victim_verifies_the_address():
    """The victim follows a verification link for their own address (one the sign-up mailed, or asked
    for with /send-verification-email): a proof of the mailbox, like a reset."""
    mail.outbox.clear()
    assert ApiClient().api_post("/send-verification-email", {"email": VICTIM}).status_code == 200
    token = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": token}).status_code == 200


def test_a_pre_hijackers_passkey_dies_when_the_owner_verifies_the_address(pre_hijacker):
    """Verification, not a reset, is the first proof here: the reset that follows finds a verified
    account and (with better-auth's default) ends nothing, so the passkey must go at verification."""
    _, authenticator = pre_hijacker
    _victim_verifies_the_address()
    _victim_resets_the_password()
    thief = ApiClient()
    assert sign_in(thief, authenticator).status_code in (400, 401)
    assert thief.api_get("/get-session").json() is None


def test_a_pre_hijackers_session_dies_when_the_owner_verifies_the_address_then_resets(pre_hijacker, configure):
    """The same gap without a passkey. A reset of an unverified account ends its sessions "whatever
    ``revoke_sessions_on_password_reset`` says" (flows/password_reset.py); with better-auth's default
    (off), verifying first makes the reset find a verified account, and the session kept from sign-up
    survives: the first proof of the mailbox, whichever it is, must end it."""
    configure(email_and_password={"revoke_sessions_on_password_reset": False})
    client, _ = pre_hijacker
    _victim_verifies_the_address()
    _victim_resets_the_password()
    assert client.api_get("/get-session").json() is None


def test_a_verified_owners_passkey_survives_their_own_password_reset(make_user):
    """The regression that bounds the fix: a proven owner's passkeys are theirs, a reset keeps them."""
    make_user(email=VICTIM, email_verified=True)
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": VICTIM, "password": PASSWORD}).status_code == 200
    authenticator = SoftAuthenticator(RP_ID, ORIGIN)
    assert register(client, authenticator).status_code == 200
    _victim_resets_the_password()
    assert sign_in(ApiClient(), authenticator).status_code == 200
