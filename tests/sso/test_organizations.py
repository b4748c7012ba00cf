"""Organization endpoints: create, list, list-members (sso.md §8.1)."""

import pytest

from authservice.models import Session
from sso import organizations
from sso.models import Member, Organization
from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db


def _create(client, slug="acme", **extra):
    return client.api_post("/organization/create", {"name": "Acme Inc", "slug": slug, **extra})


def test_create_makes_the_caller_owner_and_answers_better_auths_shape(sign_in):
    client = sign_in()
    response = _create(client, logo="https://acme.com/logo.png", metadata={"plan": "pro"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"id", "name", "slug", "logo", "metadata", "createdAt", "members"}
    assert body["metadata"] == {"plan": "pro"}
    [member] = body["members"]
    assert member["role"] == "owner" and member["userId"] == client.user.pk
    assert member["organizationId"] == body["id"]
    assert set(member) == {"id", "organizationId", "userId", "role", "createdAt"}


def test_create_sets_the_active_organization(sign_in):
    client = sign_in()
    org_id = _create(client).json()["id"]
    assert organizations.active_organization_id(Session.objects.get(user=client.user)) == org_id


def test_keep_current_active_organization(sign_in):
    client = sign_in()
    first = _create(client, "first").json()["id"]
    _create(client, "second", keepCurrentActiveOrganization=True)
    assert organizations.active_organization_id(Session.objects.get(user=client.user)) == first


def test_taken_slug_is_organization_already_exists(sign_in):
    client = sign_in()
    _create(client)
    response = _create(sign_in("bob@acme.com"))
    assert response.status_code == 400
    assert error_of(response) == {"message": "Organization already exists", "code": "ORGANIZATION_ALREADY_EXISTS",
                                  "status": 400}


def test_create_needs_a_session(db):
    assert _create(ApiClient()).status_code == 401


def test_create_is_origin_checked(sign_in):
    client = sign_in()
    client.origin = "https://evil.example.com"
    response = _create(client)
    assert response.status_code == 403
    assert not Organization.objects.exists()


def test_list_holds_the_callers_organizations_of_any_role(sign_in):
    client, other = sign_in(), sign_in("bob@acme.com")
    _create(client, "mine")
    theirs = _create(other, "theirs").json()["id"]
    _create(other, "private")
    Member.objects.create(organization_id=theirs, user=client.user, role="member")
    response = client.api_get("/organization/list")
    assert response.status_code == 200
    assert [org["slug"] for org in response.json()] == ["mine", "theirs"]
    assert set(response.json()[0]) == {"id", "name", "slug", "logo", "metadata", "createdAt"}


def test_list_is_empty_without_memberships(sign_in):
    assert sign_in().api_get("/organization/list").json() == []


def test_list_members_of_the_active_organization(sign_in):
    client, bob = sign_in(), sign_in("bob@acme.com")
    org_id = _create(client).json()["id"]
    Member.objects.create(organization_id=org_id, user=bob.user, role="member")
    response = client.api_get("/organization/list-members")
    assert response.status_code == 200
    body = response.json()
    assert body["total"] == 2
    assert [m["role"] for m in body["members"]] == ["owner", "member"]
    assert body["members"][1]["user"] == {"id": bob.user.pk, "name": "Ada", "email": "bob@acme.com",
                                          "image": None}


def test_list_members_by_id_slug_limit_and_offset(sign_in):
    client, bob = sign_in(), sign_in("bob@acme.com")
    org_id = _create(client, keepCurrentActiveOrganization=True).json()["id"]
    Member.objects.create(organization_id=org_id, user=bob.user, role="member")
    by_id = client.api_get("/organization/list-members", {"organizationId": org_id, "limit": "1", "offset": "1"})
    assert by_id.json()["total"] == 2
    assert [m["userId"] for m in by_id.json()["members"]] == [bob.user.pk]
    by_slug = client.api_get("/organization/list-members", {"organizationSlug": "acme"})
    assert len(by_slug.json()["members"]) == 2


def test_list_members_without_any_organization_is_no_active_organization(sign_in):
    response = sign_in().api_get("/organization/list-members")
    assert response.status_code == 400
    assert error_of(response)["code"] == "NO_ACTIVE_ORGANIZATION"


def test_list_members_of_a_foreign_organization_is_403(sign_in):
    org_id = _create(sign_in()).json()["id"]
    response = sign_in("eve@evil.com").api_get("/organization/list-members", {"organizationId": org_id})
    assert response.status_code == 403
    assert error_of(response) == {"message": "You are not a member of this organization",
                                  "code": "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION", "status": 403}


def test_add_member_inserts_once(sign_in):
    client = sign_in()
    org = Organization.objects.create(name="Acme", slug="acme")
    assert organizations.add_member(org.pk, client.user, "member") is not None
    assert organizations.add_member(org.pk, client.user, "admin") is None
    assert Member.objects.get().role == "member"


def test_endpoints_do_not_exist_with_the_feature_off(sign_in, configure_sso):
    configure_sso(organization={"enabled": False})
    client = sign_in()
    assert _create(client).status_code == 404
    assert client.api_get("/organization/list").status_code == 404


@pytest.mark.parametrize("field", ["name", "slug"])
def test_name_or_slug_over_255_characters_is_a_validation_error(sign_in, field):
    response = sign_in().api_post("/organization/create", {"name": "Org", "slug": "org", field: "x" * 256})
    assert error_of(response)["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("value", ["9" * 25, "-1", "1.5", "٣"])
def test_member_page_outside_the_safe_integer_range_is_a_validation_error(sign_in, value):
    client = sign_in()
    _create(client)
    response = client.api_get("/organization/list-members", {"limit": value})
    assert error_of(response)["code"] == "VALIDATION_ERROR"
