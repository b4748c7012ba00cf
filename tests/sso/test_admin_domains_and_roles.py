"""The admin shows each domain's state and the provider's role mapping (issue 14 §3, §4)."""

import json

import pytest

from sso.models import SsoProvider, SsoProviderDomain
from tests.sso.test_admin_and_commands import _form_data

pytestmark = pytest.mark.django_db

MAPPING = {"roleMapping": {"attribute": "groups", "values": {"it-admins": "admin"}, "defaultRole": "member"}}


@pytest.fixture
def provider(make_user):
    provider = SsoProvider.objects.create(
        provider_id="acme", issuer="https://idp.acme.com", domain="corp.com,corp.de", user=make_user(),
        oidc_config={"clientId": "client-1", "issuer": "https://idp.acme.com"}, organization_provisioning=MAPPING)
    SsoProviderDomain.objects.filter(domain="corp.com").update(status="verified")
    SsoProviderDomain.objects.filter(domain="corp.de").update(token="tok-corp-de-123")
    return provider


def page(admin_client, url):
    response = admin_client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_the_list_shows_each_domains_state(admin_client, provider):
    text = page(admin_client, "/admin/sso/ssoprovider/")
    assert "corp.com (verified), corp.de (pending)" in text


def test_the_change_page_shows_each_domains_record_and_state(admin_client, provider):
    text = page(admin_client, f"/admin/sso/ssoprovider/{provider.pk}/change/")
    assert "<td>_auth-token-acme.corp.de</td>" in text
    assert "<td>pending</td>" in text and "<td>verified</td>" in text


def test_the_change_page_shows_the_role_mapping(admin_client, provider):
    text = page(admin_client, f"/admin/sso/ssoprovider/{provider.pk}/change/")
    assert "group it-admins: <b>admin</b>" in text
    assert "no matching group: <b>member</b>" in text


def test_the_list_can_be_filtered_by_domain_state(admin_client, provider):
    assert "acme" in page(admin_client, "/admin/sso/ssoprovider/?domain_entries__status=pending")


def test_the_admin_refuses_a_mapping_to_owner(admin_client, provider):
    bad = json.dumps({"roleMapping": {"attribute": "groups", "values": {"x": "owner"}}})
    response = admin_client.post(f"/admin/sso/ssoprovider/{provider.pk}/change/",
                                 _form_data(provider, organization_provisioning=bad))
    assert response.status_code == 200  # the form again, with the error
    assert SsoProvider.objects.get().organization_provisioning == MAPPING


def test_the_admin_saves_a_valid_mapping(admin_client, provider):
    changed = {"roleMapping": {"attribute": "roles", "values": {"ops": "admin"}}}
    response = admin_client.post(f"/admin/sso/ssoprovider/{provider.pk}/change/",
                                 _form_data(provider, organization_provisioning=json.dumps(changed)))
    assert response.status_code == 302
    assert SsoProvider.objects.get().organization_provisioning == changed


def test_ticking_domain_verified_in_the_admin_verifies_every_domain(admin_client, provider):
    response = admin_client.post(f"/admin/sso/ssoprovider/{provider.pk}/change/",
                                 _form_data(provider, domain_verified="on",
                                            organization_provisioning=json.dumps(MAPPING)))
    assert response.status_code == 302
    assert set(SsoProviderDomain.objects.values_list("status", flat=True)) == {"verified"}


def test_the_domain_list_shows_every_providers_domains_with_their_state(admin_client, provider):
    text = page(admin_client, "/admin/sso/ssoproviderdomain/")
    assert "corp.com" in text and "corp.de" in text and "verified" in text and "pending" in text


def test_the_domain_list_finds_which_provider_holds_a_domain(admin_client, provider):
    text = page(admin_client, "/admin/sso/ssoproviderdomain/?q=corp.de")
    assert "corp.de" in text and "corp.com" not in text


def test_domains_cannot_be_added_or_changed_in_their_own_list(admin_client, provider):
    row = SsoProviderDomain.objects.get(domain="corp.de")
    assert admin_client.get("/admin/sso/ssoproviderdomain/add/").status_code == 403
    response = admin_client.post(f"/admin/sso/ssoproviderdomain/{row.pk}/change/", {"status": "verified"})
    assert response.status_code == 403
    assert SsoProviderDomain.objects.get(pk=row.pk).status == "pending"
