"""I1 / I9: an e-mail link applies only to the account it was mailed for, and a change link only once.

Change-e-mail links used to name their account by address and be reusable for an hour. Anyone who
once held an address (any unverified sign-up does) could then keep a link that moves *whoever has
that address later* onto a mailbox of theirs, marks it verified and signs the clicker in as them:

1. the attacker signs up with victim@example.com (nobody checks the mailbox);
2. asks /change-email twice, to two mailboxes they read: two links for victim@example.com;
3. follows link 1 (or deletes the account): victim@example.com is free again;
4. the real victim signs up with victim@example.com and verifies it;
5. the attacker follows link 2 with no cookie.

A link now names the account's id and the address it was mailed for, and is honoured only while that
account still has that address and the password and verification state it had when the link was
asked for.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db

VICTIM = "victim@example.com"


def _token(message):
    return re.search(r"[?&]token=([^&\s]+)", message.body).group(1)


def _sign_up(email, password=PASSWORD):
    client = ApiClient()
    response = client.api_post("/sign-up/email", {"email": email, "password": password, "name": "N"})
    assert response.status_code == 200, response.content
    return client, get_user_model().objects.get(email=email)


def _change_links(client, *new_emails):
    mail.outbox.clear()
    for new in new_emails:
        assert client.api_post("/change-email", {"newEmail": new}).status_code == 200
    return {m.to[0]: _token(m) for m in mail.outbox}


def _victim_arrives():
    _, victim = _sign_up(VICTIM, "victim pass 123")
    get_user_model().objects.filter(pk=victim.pk).update(email_verified=True)
    return victim


def _assert_untouched(victim, outsider):
    victim.refresh_from_db()
    assert victim.email == VICTIM
    session = outsider.api_get("/get-session").json()
    assert not session or session["user"]["id"] != victim.pk


def test_old_change_link_cannot_take_over_the_next_owner_of_the_address():
    attacker, account = _sign_up(VICTIM)
    links = _change_links(attacker, "mallory1@evil.example", "mallory2@evil.example")
    assert ApiClient().api_get("/verify-email", {"token": links["mallory1@evil.example"]}).status_code == 200
    assert get_user_model().objects.get(pk=account.pk).email == "mallory1@evil.example"
    victim = _victim_arrives()
    outsider = ApiClient()
    response = outsider.api_get("/verify-email", {"token": links["mallory2@evil.example"]})
    assert (response.status_code, response.json()["code"]) == (401, "USER_NOT_FOUND")
    _assert_untouched(victim, outsider)


def test_change_link_of_a_deleted_account_cannot_take_over_the_next_owner():
    attacker, account = _sign_up(VICTIM)
    links = _change_links(attacker, "mallory@evil.example")
    account.delete()
    victim = _victim_arrives()
    outsider = ApiClient()
    response = outsider.api_get("/verify-email", {"token": links["mallory@evil.example"]})
    assert (response.status_code, response.json()["code"]) == (401, "USER_NOT_FOUND")
    _assert_untouched(victim, outsider)


def test_sibling_change_link_stays_dead_after_the_account_returns_to_its_address():
    owner, account = _sign_up("mallory@evil.example")
    get_user_model().objects.filter(pk=account.pk).update(email_verified=True)
    links = _change_links(owner, "one@evil.example", "two@evil.example")
    assert ApiClient().api_get("/verify-email", {"token": links["one@evil.example"]}).status_code == 200
    # Followed outside the owner's session, the link was the first proof of one@: the owner's other
    # sessions ended with it (authservice/flows/email_proof.py), so they sign in again.
    owner = ApiClient()
    assert owner.api_post("/sign-in/email", {"email": "one@evil.example", "password": PASSWORD}).status_code == 200
    back = _change_links(owner, "mallory@evil.example")
    assert ApiClient().api_get("/verify-email", {"token": back["mallory@evil.example"]}).status_code == 200
    assert get_user_model().objects.get(pk=account.pk).email == "mallory@evil.example"
    response = ApiClient().api_get("/verify-email", {"token": links["two@evil.example"]})
    assert (response.status_code, response.json()["code"]) == (401, "INVALID_TOKEN")
    assert get_user_model().objects.get(pk=account.pk).email == "mallory@evil.example"


def test_change_link_asked_for_before_the_owners_password_reset_dies():
    # The pre-hijacker keeps the account's id and address; the owner's reset is what must kill it.
    attacker, account = _sign_up(VICTIM)
    links = _change_links(attacker, "mallory@evil.example")
    owner = ApiClient()
    assert owner.api_post("/request-password-reset", {"email": VICTIM}).status_code == 200
    reset_token = re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)
    assert owner.api_post("/reset-password", {"token": reset_token,
                                              "newPassword": "owner pass 123"}).status_code == 200
    outsider = ApiClient()
    response = outsider.api_get("/verify-email", {"token": links["mallory@evil.example"]})
    assert (response.status_code, response.json()["code"]) == (401, "INVALID_TOKEN")
    account.refresh_from_db()
    assert account.email == VICTIM
    assert outsider.api_get("/get-session").json() is None


def test_verification_link_of_a_former_holder_does_not_verify_the_next_owner():
    former, account = _sign_up(VICTIM)
    mail.outbox.clear()
    assert former.api_post("/send-verification-email", {"email": VICTIM}).status_code == 200
    token = _token(mail.outbox[-1])
    account.delete()
    _, owner = _sign_up(VICTIM, "owner pass 123")
    response = ApiClient().api_get("/verify-email", {"token": token})
    assert response.status_code == 401
    owner.refresh_from_db()
    assert owner.email_verified is False
