"""I9, I1 and "never a 500": what a verification or change-e-mail link may do to the browser that opens it.

A link is a plain GET: any page can make a signed-in victim's browser open one (no Origin check
applies). Found by the second attack pass on issue 12: with auto sign-in after verification, the
attacker's own link switched the victim's browser to the attacker's account (login CSRF), and a
change-e-mail link of an account deactivated after it was mailed answered 500.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db


def signed_in_as(email):
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": email, "password": PASSWORD}).status_code == 200
    return client


def mailed_token():
    return re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)


def test_someone_elses_verification_link_does_not_switch_a_signed_in_browser(make_user, configure):
    configure(email_verification={"auto_sign_in_after_verification": True})
    victim = make_user(email="victim@example.com", email_verified=True)
    mallory = make_user(email="mallory@example.com", email_verified=False)
    mail.outbox.clear()
    assert signed_in_as("mallory@example.com").api_post(
        "/send-verification-email", {"email": "mallory@example.com"}).status_code == 200
    browser = signed_in_as("victim@example.com")
    browser.api_get("/verify-email", {"token": mailed_token()})  # a link on the attacker's page
    assert browser.api_get("/get-session").json()["user"]["id"] == victim.pk
    # None in the victim's browser; the attacker's own sign-in predates the first proof of the address
    # and ended with it (authservice/flows/email_proof.py).
    assert not Session.objects.filter(user=mallory).exists()


def test_a_verification_link_still_signs_in_a_browser_without_a_session(make_user, configure):
    configure(email_verification={"auto_sign_in_after_verification": True})
    ada = make_user(email="ada@example.com", email_verified=False)
    mail.outbox.clear()
    assert signed_in_as("ada@example.com").api_post(
        "/send-verification-email", {"email": "ada@example.com"}).status_code == 200
    fresh = ApiClient()
    assert fresh.api_get("/verify-email", {"token": mailed_token()}).status_code == 200
    assert fresh.api_get("/get-session").json()["user"]["id"] == ada.pk


def test_a_change_link_of_an_account_deactivated_since_is_refused_and_moves_nothing(make_user):
    user = make_user(email="old@example.com")
    mail.outbox.clear()
    assert signed_in_as("old@example.com").api_post("/change-email", {"newEmail": "new@example.com"}).status_code == 200
    token = mailed_token()
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)  # bulk: updated_at unchanged
    response = ApiClient(raise_request_exception=False).api_get("/verify-email", {"token": token})
    assert response.status_code == 401, response.content
    assert get_user_model().objects.get(pk=user.pk).email == "old@example.com"
