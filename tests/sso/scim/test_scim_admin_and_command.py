"""SCIM connections in Django admin and ``manage.py scim_token``: tokens shown once, stored hashed."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from sso.scim.models import ScimConnection
from tests.sso.scim.conftest import ScimClient, user_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(make_user):
    admin = make_user(email="root@example.com", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(admin)
    return client


def test_the_admin_action_shows_a_new_token_once_and_it_works(admin_client, scim):
    response = admin_client.post("/admin/sso/scimconnection/", {
        "action": "generate_token", "_selected_action": [scim.connection.pk]})
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    token = response.content.decode().split("<code>")[1].split("</code>")[0]
    assert ScimClient(token).get_("/Users").status_code == 200
    assert scim.get_("/Users").status_code == 401  # the old token stopped working
    page = admin_client.get(f"/admin/sso/scimconnection/{scim.connection.pk}/change/").content.decode()
    assert token not in page and token[-4:] in page


def test_the_admin_action_revokes(admin_client, scim):
    admin_client.post("/admin/sso/scimconnection/", {"action": "revoke_token",
                                                      "_selected_action": [scim.connection.pk]})
    assert scim.get_("/Users").status_code == 401


def test_scim_users_and_groups_pages_open(admin_client, scim):
    scim.scim("POST", "/Users", user_body())
    for url in ("/admin/sso/scimconnection/", "/admin/sso/scimuser/", "/admin/sso/scimgroup/"):
        assert admin_client.get(url).status_code == 200


def test_the_command_prints_a_working_token(provider):
    out = StringIO()
    call_command("scim_token", provider.provider_id, stdout=out, stderr=StringIO())
    token = out.getvalue().strip()
    assert ScimClient(token).get_("/ServiceProviderConfig").status_code == 200
    assert token not in str(ScimConnection.objects.get(provider=provider).__dict__)


def test_the_command_revokes(provider):
    call_command("scim_token", provider.provider_id, stdout=StringIO(), stderr=StringIO())
    call_command("scim_token", provider.provider_id, "--revoke", stdout=StringIO())
    assert ScimConnection.objects.get(provider=provider).token_hash is None
    with pytest.raises(CommandError):
        call_command("scim_token", provider.provider_id, "--revoke", stdout=StringIO())


def test_the_command_refuses_an_unknown_provider(db):
    with pytest.raises(CommandError):
        call_command("scim_token", "nope", stdout=StringIO())
