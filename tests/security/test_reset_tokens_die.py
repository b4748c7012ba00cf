"""I1 and I9: a reset link is a secret of the password it replaces; a new password ends all of them.

The attack: someone who once read the victim's mailbox (a shared computer, a forwarded mail, an old
backup) keeps an unused reset link. On 5cf316d the victim's own reset, or a change of password, left
every other outstanding link alive, so the holder could set the password again within the hour and
sign in as the victim (I1: a session only for whoever proved the current secret). Now setting a
password, by reset or by change, deletes every other reset token of that user.
"""

import re

import pytest
from django.core import mail
from django.core.management import call_command

from authservice.models import Verification

from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db

TOKEN = re.compile(r"/reset-password/([A-Za-z0-9]{24})\?")
VICTIMS_NEW = "the victim's own new password"
ATTACKERS = "the attacker's chosen password"


def mailed_reset_tokens(api, email, count):
    for _ in range(count):
        api.api_post("/forget-password", {"email": email, "redirectTo": "/reset"})
    return [TOKEN.search(message.body).group(1) for message in mail.outbox[-count:]]


def reset(api, token, password):
    return api.api_post("/reset-password", {"token": token, "newPassword": password})


def signs_in(email, password):
    response = ApiClient().api_post("/sign-in/email", {"email": email, "password": password})
    return response.status_code == 200


def test_a_reset_kills_the_other_outstanding_reset_tokens(api, user):
    victims, kept = mailed_reset_tokens(api, user.email, 2)
    assert reset(api, victims, VICTIMS_NEW).status_code == 200
    response = reset(api, kept, ATTACKERS)
    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_TOKEN"
    assert signs_in(user.email, VICTIMS_NEW)
    assert not signs_in(user.email, ATTACKERS)


def test_the_mailed_link_of_a_killed_token_lands_on_invalid_token(api, user):
    victims, kept = mailed_reset_tokens(api, user.email, 2)
    reset(api, victims, VICTIMS_NEW)
    landed = api.api_get(f"/reset-password/{kept}", {"callbackURL": "/reset"})
    assert landed.status_code == 302
    assert "error=INVALID_TOKEN" in landed["Location"]


def test_a_password_change_kills_outstanding_reset_tokens(signed_in):
    (kept,) = mailed_reset_tokens(ApiClient(), signed_in.user.email, 1)
    changed = signed_in.api_post("/change-password", {"currentPassword": PASSWORD,
                                                      "newPassword": VICTIMS_NEW})
    assert changed.status_code == 200
    response = reset(ApiClient(), kept, ATTACKERS)
    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_TOKEN"
    assert signs_in(signed_in.user.email, VICTIMS_NEW)


@pytest.mark.django_db(transaction=True)
def test_a_reset_queued_before_a_password_change_mails_no_link_after_it(signed_in, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    ApiClient().api_post("/forget-password", {"email": signed_in.user.email})
    signed_in.api_post("/change-password", {"currentPassword": PASSWORD, "newPassword": VICTIMS_NEW})
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    assert not Verification.objects.filter(identifier__startswith="reset-password:").exists()
    assert mail.outbox == []
