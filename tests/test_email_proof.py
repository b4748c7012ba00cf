"""Proof of the e-mail address (authservice/flows/email_proof.py): what the owner keeps.

The attacks are in tests/security/test_attack_prehijack_*.py; these are the owner's side of the rule.
"""

import json
import re

import pytest
from django.core import mail

from authservice import users
from authservice.models import Account, Verification
from tests.conftest import PASSWORD, ApiClient
from tests.peers.social import _stub_server, callback, corp, sign_in_with_corp, stub  # noqa: F401

pytestmark = pytest.mark.django_db


def _verification_token(client, email):
    mail.outbox.clear()
    assert client.api_post("/send-verification-email", {"email": email}).status_code == 200
    return re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)


def _reset(email, new_password="owner pass 99"):
    mail.outbox.clear()
    assert ApiClient().api_post("/request-password-reset", {"email": email}).status_code == 200
    token = re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_post("/reset-password", {"token": token, "newPassword": new_password}).status_code == 200


def _password_works(email, password=PASSWORD):
    return ApiClient().api_post("/sign-in/email", {"email": email, "password": password}).status_code == 200


def test_the_verification_link_records_when_the_address_was_proven(api, user):
    api.api_get("/verify-email", {"token": _verification_token(api, user.email)})
    user.refresh_from_db()
    assert users.email_verified_at_of(user) is not None


def test_verifying_while_signed_in_keeps_the_session_and_the_password_through_a_later_link(signed_in, corp):
    signed_in.api_get("/verify-email", {"token": _verification_token(signed_in, signed_in.user.email)})
    assert signed_in.api_get("/get-session").json() is not None
    sign_in_with_corp(ApiClient(), corp, sub="sub-ada", email=signed_in.user.email)
    assert _password_works(signed_in.user.email)


def test_a_link_followed_elsewhere_keeps_the_password_until_a_provider_is_linked(signed_in):
    ApiClient().api_get("/verify-email", {"token": _verification_token(signed_in, signed_in.user.email)})
    assert _password_works(signed_in.user.email)


def test_a_reset_marks_the_address_verified(user):
    _reset(user.email)
    user.refresh_from_db()
    assert users.is_email_verified(user)


def test_a_reset_confirms_the_password_it_sets(user, corp):
    ApiClient().api_get("/verify-email", {"token": _verification_token(ApiClient(), user.email)})
    _reset(user.email)
    sign_in_with_corp(ApiClient(), corp, sub="sub-ada", email=user.email)
    assert _password_works(user.email, "owner pass 99")


def test_a_social_link_made_after_the_proof_survives_a_reset(make_user, corp):
    user = make_user(email_verified=True)
    sign_in_with_corp(ApiClient(), corp, sub="sub-ada", email=user.email)
    _reset(user.email)
    assert Account.objects.filter(provider_id="corp", user=user).exists()


def test_an_account_verified_before_proof_times_were_kept_keeps_its_password_on_a_link(make_user, corp):
    user = make_user(email_verified=True)
    users.update(user, email_verified_at=None)  # as the migration leaves an account it cannot date
    sign_in_with_corp(ApiClient(), corp, sub="sub-ada", email=user.email)
    assert _password_works(user.email)


def test_the_identity_that_proves_the_address_stays_linked(make_user, corp, configure):
    configure(account_linking={"require_local_email_verified": False})
    user = make_user()
    sign_in_with_corp(ApiClient(), corp, sub="sub-ada", email=user.email)
    assert Account.objects.filter(provider_id="corp", account_id="sub-ada", user=user).exists()


def test_a_provider_linked_from_the_owners_session_that_then_verifies_the_address_keeps_the_password(signed_in,
                                                                                                     corp):
    assert signed_in.api_post("/link-social", {"provider": "corp", "callbackURL": "/x"}).status_code == 200
    state = Verification.objects.exclude(identifier__startswith="reset").latest("created_at")
    corp.token_claims = corp.claims(json.loads(state.value)["idTokenNonce"], sub="sub-ada",
                                    email=signed_in.user.email)
    assert "error" not in callback(signed_in, code="c", state=state.identifier)["Location"]
    sign_in_with_corp(ApiClient(), corp, sub="sub-ada", email=signed_in.user.email)  # verifies the address
    signed_in.user.refresh_from_db()
    assert users.is_email_verified(signed_in.user)
    assert _password_works(signed_in.user.email)
