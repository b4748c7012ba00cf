"""Attack 17c, orderings that held: kept as regressions (I1, I9).

Each is an interleaving of the pre-hijacker's steps with the victim's proof of the address that did not
leave the attacker a way in.
"""

import re

import pytest
from django.core import mail

from tests.conftest import PASSWORD, ApiClient
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, register, sign_in
from tests.two_factor_support import code, enrol

pytestmark = pytest.mark.django_db
VICTIM = "victim@example.com"


@pytest.fixture
def pre_hijacker():
    client = ApiClient()
    assert client.api_post("/sign-up/email", {"email": VICTIM, "password": PASSWORD,
                                              "name": "Victim"}).status_code == 200
    return client


def _victim_follows_the_verification_mail_elsewhere():
    mail.outbox.clear()
    assert ApiClient().api_post("/send-verification-email", {"email": VICTIM}).status_code == 200
    token = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": token}).status_code == 200


def _victim_resets_the_password():
    mail.outbox.clear()
    assert ApiClient().api_post("/request-password-reset", {"email": VICTIM}).status_code == 200
    token = re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_post("/reset-password", {"token": token, "newPassword": "victim pass 99"}).status_code == 200


def test_a_passkey_registered_before_the_proof_from_a_session_already_signed_out_of_dies_with_the_proof(
        pre_hijacker):
    key = SoftAuthenticator(RP_ID, ORIGIN)
    assert register(pre_hijacker, key).status_code == 200
    assert pre_hijacker.api_post("/sign-out", {}).status_code == 200
    _victim_follows_the_verification_mail_elsewhere()
    later = ApiClient()
    sign_in(later, key)
    assert later.api_get("/get-session").json() is None


def test_a_registration_challenge_asked_for_before_the_proof_registers_nothing_after_it(pre_hijacker):
    key = SoftAuthenticator(RP_ID, ORIGIN)
    options = pre_hijacker.api_get("/passkey/generate-register-options").json()
    _victim_resets_the_password()
    response = pre_hijacker.api_post("/passkey/verify-registration", {"response": key.create(options)})
    assert response.status_code == 401
    later = ApiClient()
    sign_in(later, key)
    assert later.api_get("/get-session").json() is None


def test_a_two_factor_sign_in_left_pending_before_the_owners_reset_finishes_nothing_after_it(pre_hijacker):
    secret, _ = enrol(pre_hijacker)
    attacker = ApiClient()
    answer = attacker.api_post("/sign-in/email", {"email": VICTIM, "password": PASSWORD}).json()
    assert answer.get("twoFactorRedirect") is True
    _victim_resets_the_password()
    finished = attacker.api_post("/two-factor/verify-totp", {"code": code(secret)})
    assert finished.status_code == 401
    assert attacker.api_get("/get-session").json() is None


def test_update_user_cannot_make_the_pre_hijackers_address_proven(pre_hijacker):
    """Were it proven by the attacker, the victim's later proof would not be the first and retire nothing."""
    for body in ({"emailVerified": True}, {"emailVerifiedAt": "2020-01-01T00:00:00Z"}):
        assert pre_hijacker.api_post("/update-user", body).status_code == 400
    assert pre_hijacker.api_get("/get-session").json()["user"]["emailVerified"] is False
