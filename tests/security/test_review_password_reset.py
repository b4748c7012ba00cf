"""I1 / I9: a reset token sets one password, once, for one user, within its hour, and nothing else does.

The attacker tries: reusing a token (body, then query), an expired token, the token of one kind of
verification row as another (a delete-account token, a social OAuth state, the raw
``reset-password:<token>`` identifier, SQL wildcards), a reset for a deactivated user (no mail, no
token), a request that a later account change overtook (no link), and the GET link with a valid
token but a foreign callback (refused before anything is revealed). Each must fail and leave the
password as it was.
"""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone

from authservice.flows import delete_user
from authservice.models import Verification
from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db
TOKEN = re.compile(r"/reset-password/([A-Za-z0-9]{24})\?")


def _mail_token(email="ada@example.com"):
    mail.outbox.clear()
    assert ApiClient().api_post("/request-password-reset", {"email": email}).status_code == 200
    return TOKEN.search(mail.outbox[-1].body).group(1) if mail.outbox else None


def _reset(token, password="a brand new password", where="body"):
    client = ApiClient()
    if where == "body":
        return client.api_post("/reset-password", {"token": token, "newPassword": password})
    return client.generic("POST", f"/api/auth/reset-password?token={token}",
                          '{"newPassword": "%s"}' % password, content_type="application/json",
                          HTTP_ORIGIN="http://127.0.0.1:8000")


def _password_is(user, password):
    return get_user_model().objects.get(pk=user.pk).check_password(password)


def test_token_works_once_in_body_or_query(user):
    token = _mail_token()
    assert _reset(token).status_code == 200
    assert _reset(token, "another password 1").status_code == 400
    assert _reset(token, "another password 1", where="query").status_code == 400
    assert _password_is(user, "a brand new password")


def test_expired_token_is_refused(user):
    token = _mail_token()
    Verification.objects.filter(identifier__endswith=token).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _reset(token).status_code == 400 and _password_is(user, PASSWORD)


def test_other_kinds_of_rows_are_not_reset_tokens(user, api, configure):
    _mail_token()
    row = Verification.objects.get()
    delete_token = "d" * 32
    Verification.objects.create(identifier=delete_user.IDENTIFIER_PREFIX + delete_token, value=user.pk,
                                expires_at=timezone.now() + timedelta(hours=1))
    Verification.objects.create(identifier="s" * 32, value=user.pk, expires_at=timezone.now() + timedelta(hours=1))
    for guess in (delete_token, "delete-account-" + delete_token, "s" * 32, row.identifier, "%", "_" * 24,
                  "reset-password:%", row.identifier.split(":")[1][:-1] + "%", "*"):
        assert _reset(guess).status_code == 400, guess
    assert _password_is(user, PASSWORD)


def test_inactive_user_gets_no_token(make_user):
    make_user(email="gone@example.com", is_active=False)
    assert _mail_token("gone@example.com") is None
    assert not Verification.objects.exists()


@pytest.mark.django_db(transaction=True)  # the worker closes its database connection when done
def test_request_overtaken_by_an_account_change_mails_nothing(user, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    from django.core.management import call_command
    assert ApiClient().api_post("/request-password-reset", {"email": user.email}).status_code == 200
    get_user_model().objects.filter(pk=user.pk).update(updated_at=timezone.now() + timedelta(seconds=5))
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    assert not Verification.objects.filter(identifier__startswith="reset-password:").exists()


def test_get_link_with_foreign_callback_is_refused_before_the_token_is_looked_at(user):
    token = _mail_token()
    response = ApiClient().api_get(f"/reset-password/{token}", {"callbackURL": "https://evil.example/steal"})
    assert response.status_code == 403 and "Location" not in response
