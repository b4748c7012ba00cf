"""Okta's and Microsoft Entra ID's provisioning sequences, replayed with the bodies their documentation
shows (Okta: "SCIM 2.0 protocol reference", with okta-customer.com for its okta.local: e-mail
validation refuses the special-use .local; Entra: "Tutorial: Develop a sample SCIM endpoint", request and
response examples). Each vendor quirk the issue names has its own test."""

import pytest

from authservice import users
from authservice.models import Session
from sso.models import Member
from tests.sso.scim.conftest import GROUP_URN, PATCH_URN, USER_URN, scim_error

pytestmark = pytest.mark.django_db

ENTERPRISE_URN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"


def ok(response, status=200):
    assert response.status_code == status, response.content
    return response.json() if response.content else None


def live_session(user, token="t"):
    return Session.objects.create(user=user, token=token, expires_at="2999-01-01T00:00:00Z")


# --- Okta ------------------------------------------------------------------------------------------------
OKTA_USER = {
    "schemas": [USER_URN], "userName": "test.user@okta-customer.com",
    "name": {"givenName": "Test", "familyName": "User"},
    "emails": [{"primary": True, "value": "test.user@okta-customer.com", "type": "work"}],
    "displayName": "Test User", "locale": "en-US", "externalId": "00ujl29u0le5T6Aj10h7",
    "groups": [], "password": "1mz050nq", "active": True,
}


@pytest.fixture
def okta_provider(provider_factory):
    return provider_factory("okta", domain="okta-customer.com")


@pytest.fixture
def okta_scim(okta_provider):
    from sso.scim import tokens
    from tests.sso.scim.conftest import ScimClient

    _, token = tokens.issue(okta_provider)
    return ScimClient(token)


def test_okta_user_lifecycle(okta_scim, okta_provider):
    scim = okta_scim
    # 1. Okta looks the user up first, by userName.
    found = ok(scim.get_("/Users", {"filter": 'userName eq "test.user@okta-customer.com"', "startIndex": 1, "count": 100}))
    assert found["totalResults"] == 0 and found["Resources"] == []
    # 2. Create.
    created = ok(scim.scim("POST", "/Users", OKTA_USER), 201)
    user = users.find_by_email("test.user@okta-customer.com")
    assert created["active"] is True and user.is_active
    assert "password" not in created and not user.has_usable_password()  # never set from the directory
    # 3. Okta's updates are PUTs of the whole user.
    updated = ok(scim.scim("PUT", f"/Users/{created['id']}", {
        **OKTA_USER, "id": created["id"], "name": {"givenName": "Another", "familyName": "User"},
        "displayName": "Another User"}))
    assert updated["name"]["givenName"] == "Another"
    assert users.name_of(users.find_by_email("test.user@okta-customer.com")) == "Another User"
    # 4. Deactivate: a PATCH without path whose value object carries active.
    live_session(user)
    deactivated = ok(scim.scim("PATCH", f"/Users/{created['id']}", {
        "schemas": [PATCH_URN], "Operations": [{"op": "replace", "value": {"active": False}}]}))
    user.refresh_from_db()
    assert deactivated["active"] is False and not user.is_active
    assert not Session.objects.filter(user=user).exists()
    # 5. Reactivate the same way.
    ok(scim.scim("PATCH", f"/Users/{created['id']}", {
        "schemas": [PATCH_URN], "Operations": [{"op": "replace", "value": {"active": True}}]}))
    user.refresh_from_db()
    assert user.is_active


def test_okta_put_can_deactivate(okta_scim):
    created = ok(okta_scim.scim("POST", "/Users", OKTA_USER), 201)
    ok(okta_scim.scim("PUT", f"/Users/{created['id']}", {**OKTA_USER, "active": False}))
    assert not users.find_by_email("test.user@okta-customer.com").is_active


def test_okta_group_push(okta_scim, okta_provider):
    scim = okta_scim
    user = ok(scim.scim("POST", "/Users", OKTA_USER), 201)
    group = ok(scim.scim("POST", "/Groups", {"schemas": [GROUP_URN], "displayName": "Test SCIMv2", "members": []}),
               201)
    # Okta renames with a value object that repeats the id.
    ok(scim.scim("PATCH", f"/Groups/{group['id']}", {"schemas": [PATCH_URN], "Operations": [
        {"op": "replace", "value": {"id": group["id"], "displayName": "Test SCIMv2 renamed"}}]}), 204)
    ok(scim.scim("PATCH", f"/Groups/{group['id']}", {"schemas": [PATCH_URN], "Operations": [
        {"op": "add", "path": "members", "value": [{"value": user["id"], "display": "test.user@okta-customer.com"}]}]}), 204)
    shown = ok(scim.get_(f"/Groups/{group['id']}"))
    assert shown["displayName"] == "Test SCIMv2 renamed"
    assert [m["value"] for m in shown["members"]] == [user["id"]]
    django_user = users.find_by_email("test.user@okta-customer.com")
    assert Member.objects.get(user=django_user, organization_id=okta_provider.organization_id).role == "member"
    # Okta removes one member with a filtered path.
    ok(scim.scim("PATCH", f"/Groups/{group['id']}", {"schemas": [PATCH_URN], "Operations": [
        {"op": "remove", "path": f'members[value eq "{user["id"]}"]'}]}), 204)
    assert "members" not in ok(scim.get_(f"/Groups/{group['id']}"))
    ok(scim.scim("DELETE", f"/Groups/{group['id']}"), 204)
    scim_error(scim.get_(f"/Groups/{group['id']}"), 404)


# --- Microsoft Entra ID ------------------------------------------------------------------------------------
ENTRA_USER = {
    "schemas": [USER_URN, ENTERPRISE_URN],
    "externalId": "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
    "userName": "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1",
    "active": True,
    "emails": [{"primary": True, "type": "work", "value": "Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com"}],
    "meta": {"resourceType": "User"},
    "name": {"formatted": "givenName familyName", "familyName": "familyName", "givenName": "givenName"},
    "roles": [],
}
ENTRA_EMAIL = "test_user_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com"


@pytest.fixture
def entra_provider(provider_factory):
    return provider_factory("entra", domain="testuser.com")


@pytest.fixture
def entra_scim(entra_provider):
    from sso.scim import tokens
    from tests.sso.scim.conftest import ScimClient

    _, token = tokens.issue(entra_provider)
    return ScimClient(token)


def test_entra_user_lifecycle(entra_scim):
    scim = entra_scim
    assert ok(scim.get_("/Users", {"filter": f'userName eq "{ENTRA_USER["userName"]}"'}))["totalResults"] == 0
    created = ok(scim.scim("POST", "/Users", ENTRA_USER), 201)
    assert created["externalId"] == ENTRA_USER["externalId"]
    # Entra queries by userName in any case and by externalId.
    by_name = ok(scim.get_("/Users", {"filter": f'userName eq "{ENTRA_USER["userName"].upper()}"'}))
    assert [r["id"] for r in by_name["Resources"]] == [created["id"]]
    by_external = ok(scim.get_("/Users", {"filter": f'externalId eq "{ENTRA_USER["externalId"]}"'}))
    assert by_external["totalResults"] == 1
    # Update: Entra's op is capitalised and its paths filter on the work address.
    patched = ok(scim.scim("PATCH", f"/Users/{created['id']}", {"schemas": [PATCH_URN], "Operations": [
        {"op": "Replace", "path": 'emails[type eq "work"].value', "value": "updatedEmail@testuser.com"},
        {"op": "Replace", "path": "name.familyName", "value": "updatedFamilyName"}]}))
    assert patched["emails"][0]["value"] == "updatedEmail@testuser.com"
    assert patched["name"]["familyName"] == "updatedFamilyName"
    assert users.find_by_email("updatedemail@testuser.com") is not None
    by_email = ok(scim.get_("/Users", {"filter": 'emails[type eq "work"].value eq "UPDATEDEMAIL@testuser.com"'}))
    assert by_email["totalResults"] == 1


def test_entra_deactivates_with_the_string_False(entra_scim):
    created = ok(entra_scim.scim("POST", "/Users", ENTRA_USER), 201)
    user = users.find_by_email(ENTRA_EMAIL)
    live_session(user)
    body = ok(entra_scim.scim("PATCH", f"/Users/{created['id']}", {"schemas": [PATCH_URN], "Operations": [
        {"op": "Replace", "path": "active", "value": "False"}]}))
    user.refresh_from_db()
    assert body["active"] is False and not user.is_active
    assert not Session.objects.filter(user=user).exists()
    ok(entra_scim.scim("PATCH", f"/Users/{created['id']}", {"schemas": [PATCH_URN], "Operations": [
        {"op": "Replace", "path": "active", "value": "True"}]}))
    user.refresh_from_db()
    assert user.is_active


def test_entra_patch_without_path_carries_attributes(entra_scim):
    created = ok(entra_scim.scim("POST", "/Users", ENTRA_USER), 201)
    body = ok(entra_scim.scim("PATCH", f"/Users/{created['id']}", {"schemas": [PATCH_URN], "Operations": [
        {"op": "Add", "value": {"displayName": "Babs", "nickName": "B"}}]}))
    assert body["displayName"] == "Babs" and body["nickName"] == "B"


def test_entra_group_push(entra_scim, entra_provider):
    scim = entra_scim
    user = ok(scim.scim("POST", "/Users", ENTRA_USER), 201)
    group = ok(scim.scim("POST", "/Groups", {
        "schemas": [GROUP_URN, "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group"],
        "externalId": "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159", "displayName": "displayName",
        "meta": {"resourceType": "Group"}}), 201)
    found = ok(scim.get_("/Groups", {"excludedAttributes": "members", "filter": 'displayName eq "DISPLAYNAME"'}))
    assert [g["id"] for g in found["Resources"]] == [group["id"]] and "members" not in found["Resources"][0]
    ok(scim.scim("PATCH", f"/Groups/{group['id']}", {"schemas": [PATCH_URN], "Operations": [
        {"op": "Add", "path": "members", "value": [{"$ref": None, "value": user["id"]}]}]}), 204)
    members = ok(scim.get_("/Groups", {"filter": f'members.value eq "{user["id"]}"'}))
    assert members["totalResults"] == 1
    ok(scim.scim("PATCH", f"/Groups/{group['id']}", {"schemas": [PATCH_URN], "Operations": [
        {"op": "Remove", "path": "members", "value": [{"$ref": None, "value": user["id"]}]}]}), 204)
    assert ok(scim.get_("/Groups", {"filter": f'members.value eq "{user["id"]}"'}))["totalResults"] == 0
    ok(scim.scim("DELETE", f"/Users/{user['id']}"), 204)
