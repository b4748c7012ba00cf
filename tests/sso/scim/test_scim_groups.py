"""SCIM Groups: CRUD, member PATCH, organization membership, signals."""

import pytest

from authservice import users
from sso.models import Member
from sso.scim import signals
from tests.sso.scim.conftest import GROUP_URN, patch_body, scim_error, user_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_users(scim):
    ids = []
    for name in ("a@acme.com", "b@acme.com"):
        response = scim.scim("POST", "/Users", user_body(name))
        assert response.status_code == 201
        ids.append(response.json()["id"])
    return ids


def group(scim, name="Engineering", members=()):
    response = scim.scim("POST", "/Groups", {"schemas": [GROUP_URN], "displayName": name,
                                             "members": [{"value": m} for m in members]})
    assert response.status_code == 201, response.content
    return response.json()


def member_ids(scim, group_id):
    return sorted(m["value"] for m in scim.get_(f"/Groups/{group_id}").json().get("members", []))


def test_create_with_members(scim, two_users):
    created = group(scim, members=two_users)
    assert sorted(m["value"] for m in created["members"]) == sorted(two_users)
    assert created["members"][0]["$ref"].endswith(f"/Users/{created['members'][0]['value']}")


def test_a_display_name_is_required(scim):
    scim_error(scim.scim("POST", "/Groups", {"schemas": [GROUP_URN]}), 400)


def test_put_replaces_name_and_members(scim, two_users):
    created = group(scim, members=two_users[:1])
    response = scim.scim("PUT", f"/Groups/{created['id']}", {"schemas": [GROUP_URN], "displayName": "Eng",
                                                             "members": [{"value": two_users[1]}]})
    assert response.status_code == 200, response.content
    assert response.json()["displayName"] == "Eng"
    assert member_ids(scim, created["id"]) == [two_users[1]]


def test_patch_add_and_remove_members(scim, two_users):
    created = group(scim)
    assert scim.scim("PATCH", f"/Groups/{created['id']}", patch_body(
        {"op": "add", "path": "members", "value": [{"value": u} for u in two_users]})).status_code == 204
    assert member_ids(scim, created["id"]) == sorted(two_users)
    assert scim.scim("PATCH", f"/Groups/{created['id']}", patch_body(
        {"op": "REMOVE", "path": f'members[value eq "{two_users[0]}"]'})).status_code == 204
    assert member_ids(scim, created["id"]) == [two_users[1]]


def test_patch_remove_all_members(scim, two_users):
    created = group(scim, members=two_users)
    scim.scim("PATCH", f"/Groups/{created['id']}", patch_body({"op": "remove", "path": "members"}))
    assert member_ids(scim, created["id"]) == []


def test_patch_with_attributes_answers_the_group(scim, two_users):
    created = group(scim, members=two_users)
    response = scim.generic("PATCH", f"/api/auth/scim/v2/Groups/{created['id']}?excludedAttributes=members",
                            '{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],'
                            '"Operations":[{"op":"replace","path":"displayName","value":"Renamed"}]}',
                            content_type="application/scim+json", HTTP_AUTHORIZATION=f"Bearer {scim.token}")
    assert response.status_code == 200 and response.json()["displayName"] == "Renamed"
    assert "members" not in response.json()


@pytest.mark.parametrize("operation", [
    {"op": "move", "path": "members"},
    {"op": "replace", "path": "nope", "value": "x"},
    {"op": "replace", "path": "id", "value": "x"},
    {"op": "remove", "path": "displayName"},
    {"op": "replace", "path": 'members[value eq "x"]', "value": []},
    {"op": "add", "path": "members", "value": "not a list"},
    {"op": "replace", "value": "not an object"},
])
def test_bad_patches_are_scim_errors(scim, operation):
    created = group(scim)
    response = scim.scim("PATCH", f"/Groups/{created['id']}", patch_body(operation))
    assert response.status_code == 400, response.content
    assert response.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]


def test_a_patch_without_the_patch_schema_is_invalid_syntax(scim):
    created = group(scim)
    scim_error(scim.scim("PATCH", f"/Groups/{created['id']}", {"Operations": []}), 400, "invalidSyntax")


def test_too_many_operations_are_refused(scim, configure_sso):
    configure_sso(scim={"max_operations": 2})
    created = group(scim)
    ops = [{"op": "replace", "path": "displayName", "value": str(n)} for n in range(3)]
    scim_error(scim.scim("PATCH", f"/Groups/{created['id']}", patch_body(*ops)), 400, "tooMany")


def test_group_members_join_the_providers_organization_with_the_default_role(scim, two_users):
    group(scim, members=two_users)
    for email in ("a@acme.com", "b@acme.com"):
        member = Member.objects.get(user=users.find_by_email(email))
        assert member.organization_id == scim.provider.organization_id and member.role == "member"


def test_role_for_groups_is_the_one_decision_and_never_owner(scim, configure_sso):
    from sso.scim.membership import role_for_groups

    assert role_for_groups(scim.provider, ["Admins"]) == "member"
    configure_sso(organization_provisioning={"default_role": "admin"})
    assert role_for_groups(scim.provider, []) == "admin"


def test_the_providers_role_mapping_decides_the_role_of_a_groups_members(scim, two_users):
    # The same mapping an SSO sign-in's groups claim goes through (sso/roles.py, docs/sso-roles.md).
    scim.provider.organization_provisioning = {"roleMapping": {"attribute": "groups", "values": {"Admins": "admin"}}}
    scim.provider.save(update_fields=["organization_provisioning"])
    admins = group(scim, name="Admins", members=two_users[:1])
    group(scim, name="Engineering", members=two_users[1:])
    assert Member.objects.get(user=users.find_by_email("a@acme.com")).role == "admin"
    assert Member.objects.get(user=users.find_by_email("b@acme.com")).role == "member"
    scim.scim("PATCH", f"/Groups/{admins['id']}", patch_body(
        {"op": "remove", "path": f'members[value eq "{two_users[0]}"]'}))
    assert Member.objects.get(user=users.find_by_email("a@acme.com")).role == "member"


def test_a_membership_made_by_hand_is_left_alone(scim, two_users):
    user = users.find_by_email("a@acme.com")
    Member.objects.filter(user=user).update(role="admin", managed_by="")
    group(scim, members=two_users)
    assert Member.objects.get(user=user).role == "admin"


def test_every_change_sends_its_signal(scim):
    seen = []

    def record(signal_name):
        def receiver(sender, **kwargs):
            seen.append(signal_name)
        return receiver

    receivers = {name: record(name) for name in (
        "scim_user_created", "scim_user_updated", "scim_user_deactivated", "scim_user_reactivated",
        "scim_user_deleted", "scim_group_created", "scim_group_updated", "scim_group_deleted")}
    for name, receiver in receivers.items():
        getattr(signals, name).connect(receiver)
    try:
        user = scim.scim("POST", "/Users", user_body()).json()
        scim.scim("PATCH", f"/Users/{user['id']}", patch_body({"op": "replace", "path": "active", "value": False}))
        scim.scim("PATCH", f"/Users/{user['id']}", patch_body({"op": "replace", "path": "active", "value": True}))
        created = group(scim, members=[user["id"]])
        scim.scim("PATCH", f"/Groups/{created['id']}", patch_body({"op": "remove", "path": "members"}))
        scim.scim("DELETE", f"/Groups/{created['id']}")
        scim.scim("DELETE", f"/Users/{user['id']}")
    finally:
        for name, receiver in receivers.items():
            getattr(signals, name).disconnect(receiver)
    assert seen == ["scim_user_created", "scim_user_updated", "scim_user_deactivated", "scim_user_updated",
                    "scim_user_reactivated", "scim_group_created", "scim_group_updated", "scim_group_deleted",
                    "scim_user_deleted"]


@pytest.mark.parametrize("query", [{"excludedAttributes": "members"}, {"attributes": "displayName"},
                                   {"excludedAttributes": "externalId,members"}])
def test_a_group_read_without_its_members_does_not_load_them(scim, two_users, query):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    created = group(scim, members=two_users)
    with CaptureQueriesContext(connection) as captured:
        response = scim.get_(f"/Groups/{created['id']}", query)
    assert response.status_code == 200 and response.json()["displayName"] == "Engineering"
    assert "members" not in response.json()
    assert not [q["sql"] for q in captured if "sso_scimgroupmember" in q["sql"]]


def test_a_group_read_with_members_named_shows_them(scim, two_users):
    created = group(scim, members=two_users)
    answer = scim.get_(f"/Groups/{created['id']}", {"attributes": "members"}).json()
    assert sorted(m["value"] for m in answer["members"]) == sorted(two_users)
