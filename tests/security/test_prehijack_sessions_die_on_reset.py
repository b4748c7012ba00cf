"""I1: a password reset proves the mailbox, so it ends what an earlier holder of the account kept.

Pre-hijacking, the "unexpired session" attack (Sudhodanan & Paverd 2022): the attacker signs up with
the victim's address (nobody verifies it) and keeps that session. The victim cannot sign up (the
address is taken), so they reset the password through their mailbox. With better-auth's default
(``revoke_sessions_on_password_reset`` False) the attacker's session used to survive and act on the
victim's account. A reset of an account whose address was never verified now ends all its sessions.

A reset link also names the address it was mailed to: once the account has left that address (by a
change-e-mail link, flow (a), or the admin) its outstanding reset links are deleted.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db


def _reset_token():
    return re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)


def _reset_link_for(email):
    assert ApiClient().api_post("/request-password-reset", {"email": email}).status_code == 200
    return _reset_token()


def _signed_in(email):
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": email, "password": PASSWORD}).status_code == 200
    return client


def test_attackers_pre_hijack_session_dies_when_the_owner_resets_the_password():
    attacker = ApiClient()
    assert attacker.api_post("/sign-up/email", {"email": "victim@example.com", "password": PASSWORD,
                                                "name": "Victim"}).status_code == 200
    victim = ApiClient()
    assert victim.api_post("/sign-up/email", {"email": "victim@example.com", "password": "victim pass 99",
                                              "name": "V"}).status_code == 422
    token = _reset_link_for("victim@example.com")
    assert victim.api_post("/reset-password", {"token": token,
                                               "newPassword": "victim pass 99"}).status_code == 200
    assert attacker.api_get("/get-session").json() is None


def test_reset_link_mailed_to_a_former_address_dies_with_change_email_flow_a(configure):
    configure(change_email={"update_email_without_verification": True})
    user = get_user_model().objects.create_user(email="old@example.com", password=PASSWORD, name="U")
    token = _reset_link_for("old@example.com")
    assert _signed_in("old@example.com").api_post("/change-email",
                                                  {"newEmail": "new@example.com"}).status_code == 200
    assert get_user_model().objects.get(pk=user.pk).email == "new@example.com"
    response = ApiClient().api_post("/reset-password", {"token": token, "newPassword": "taken over 123"})
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_TOKEN")


def test_reset_link_mailed_to_a_former_address_dies_with_a_change_email_link():
    user = get_user_model().objects.create_user(email="old@example.com", password=PASSWORD, name="U")
    token = _reset_link_for("old@example.com")
    mail.outbox.clear()
    assert _signed_in("old@example.com").api_post("/change-email",
                                                  {"newEmail": "new@example.com"}).status_code == 200
    link = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": link}).status_code == 200
    assert get_user_model().objects.get(pk=user.pk).email == "new@example.com"
    response = ApiClient().api_post("/reset-password", {"token": token, "newPassword": "taken over 123"})
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_TOKEN")


def _admin_form_data(response):
    """The change form's fields as the browser would post them back."""
    form, data = response.context["adminform"].form, {}
    for name, field in form.fields.items():
        if field.disabled:
            continue
        value = form.initial.get(name, field.initial)
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif isinstance(value, list):
            data[name] = [getattr(v, "pk", v) for v in value]
        elif value is not None:
            data[name] = value
    for formset in response.context["inline_admin_formsets"]:
        management = formset.formset.management_form
        for name in management.fields:
            data[f"{management.prefix}-{name}"] = management.initial.get(name, 0)
        for inline in formset.formset.initial_forms:
            data[f"{inline.prefix}-id"] = inline.instance.pk
            data[f"{inline.prefix}-user"] = inline.instance.user_id
    return data


def test_reset_link_mailed_to_a_former_address_dies_when_the_admin_changes_it():
    user = get_user_model().objects.create_user(email="old@example.com", password=PASSWORD, name="U")
    token = _reset_link_for("old@example.com")
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser(email="root@example.com", password="x" * 12))
    url = f"/admin/authservice/user/{user.pk}/change/"
    data = _admin_form_data(admin.get(url)) | {"email": "new@example.com"}
    assert admin.post(url, data).status_code == 302
    assert get_user_model().objects.get(pk=user.pk).email == "new@example.com"
    response = ApiClient().api_post("/reset-password", {"token": token, "newPassword": "taken over 123"})
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_TOKEN")
    assert get_user_model().objects.get(pk=user.pk).check_password(PASSWORD)


def test_the_pre_hijackers_session_dies_with_the_victims_reset_even_once_the_victim_verified_the_address():
    """Second attack pass: the attacker asks for a verification mail, the victim clicks it in their
    own mailbox (the account is now "verified"), then resets: by default a reset ends every session."""
    attacker = ApiClient()
    assert attacker.api_post("/sign-up/email", {"email": "ada@example.com", "password": PASSWORD,
                                                "name": "Ada"}).status_code == 200
    mail.outbox.clear()
    assert attacker.api_post("/send-verification-email", {"email": "ada@example.com"}).status_code == 200
    link_token = re.search(r"[?&]token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert ApiClient().api_get("/verify-email", {"token": link_token}).status_code == 200
    victim = ApiClient()
    mail.outbox.clear()
    assert victim.api_post("/request-password-reset", {"email": "ada@example.com"}).status_code == 200
    reset_token = re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)
    assert victim.api_post("/reset-password", {"token": reset_token, "newPassword": "victim pass 99"}).status_code == 200
    assert attacker.api_get("/get-session").json() is None
