"""The admin lists a user's passkeys and deletes one (a lost or compromised authenticator), under any user
model; the deletion is announced with ``passkey_removed``."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from authservice import signals, users
from authservice.models import Passkey


@pytest.fixture
def admin_client(db):
    if not hasattr(get_user_model().objects, "create_superuser"):
        pytest.skip("this user model has no superusers, hence no admin")
    superuser = get_user_model().objects.create_superuser(**{
        users.email_field(): "root@example.com", "password": "x" * 12,
        **({"username": "root"} if users.has_concrete_field(get_user_model(), "username") else {})})
    client = Client()
    client.force_login(superuser)
    return client


@pytest.fixture
def passkey(make_user):
    return Passkey.objects.create(user=make_user(), name="Laptop", credential_id="Y3JlZA", public_key="a2V5",
                                  device_type="singleDevice")


@pytest.fixture
def removed():
    seen = []
    signals.passkey_removed.connect(lambda **kw: seen.append(kw["passkey"].pk), weak=False, dispatch_uid="t-adm")
    yield seen
    signals.passkey_removed.disconnect(dispatch_uid="t-adm")


def test_the_passkey_changelist_lists_the_users_passkeys(admin_client, passkey):
    response = admin_client.get("/admin/authservice/passkey/")
    assert response.status_code == 200 and b"Laptop" in response.content


def test_an_admin_deletes_a_passkey_and_passkey_removed_is_sent(admin_client, passkey, removed):
    response = admin_client.post(f"/admin/authservice/passkey/{passkey.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Passkey.objects.exists()
    assert removed == [passkey.pk]


def test_the_bulk_delete_action_sends_passkey_removed(admin_client, passkey, removed):
    response = admin_client.post("/admin/authservice/passkey/", {
        "action": "delete_selected", "_selected_action": [passkey.pk], "post": "yes"})
    assert response.status_code == 302
    assert removed == [passkey.pk]


@pytest.mark.skipif(not users.layout().own, reason="the inline is on authservice's own UserAdmin")
def test_the_user_page_shows_the_passkeys_inline(admin_client, passkey):
    response = admin_client.get(f"/admin/authservice/user/{passkey.user_id}/change/")
    assert response.status_code == 200 and b"Laptop" in response.content
