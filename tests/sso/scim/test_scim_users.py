"""SCIM Users (RFC 7644 §3): create, read, replace, patch, delete, against the real database."""

import pytest

from authservice import users
from authservice.models import Session
from tests.sso.scim.conftest import SCIM, patch_body, scim_error, user_body

pytestmark = pytest.mark.django_db


def create(scim, user_name="bjensen@acme.com", **extra):
    response = scim.scim("POST", "/Users", user_body(user_name, **extra))
    assert response.status_code == 201, response.content
    return response.json()


def test_a_created_user_is_an_ordinary_user_with_a_verified_address(scim):
    body = create(scim, externalId="ext-1")
    user = users.find_by_email("bjensen@acme.com")
    assert user is not None and user.is_active
    assert users.is_email_verified(user)  # the provider's verified domain vouches for it
    assert body["userName"] == "bjensen@acme.com" and body["externalId"] == "ext-1"
    assert body["meta"]["resourceType"] == "User"
    assert body["meta"]["location"].endswith(f"/scim/v2/Users/{body['id']}")


def test_answers_are_scim_json(scim):
    response = scim.scim("POST", "/Users", user_body())
    assert response["Content-Type"] == SCIM
    assert response["Location"] == response.json()["meta"]["location"]


def test_get_returns_the_resource_and_never_a_password(scim):
    created = create(scim, password="S3cret!pass")
    response = scim.get_(f"/Users/{created['id']}")
    assert response.status_code == 200
    assert "password" not in response.json()
    assert "password" not in str(scim.connection.users.get().resource)


def test_a_duplicate_user_name_is_a_uniqueness_error_in_any_case(scim):
    create(scim)
    scim_error(scim.scim("POST", "/Users", user_body("BJensen@acme.com")), 409, "uniqueness")


def test_an_address_outside_the_providers_verified_domains_is_refused(scim):
    scim_error(scim.scim("POST", "/Users", user_body("mallory@gmail.com")), 400, "invalidValue")
    assert users.find_by_email("mallory@gmail.com") is None


def test_an_existing_user_the_connection_did_not_provision_is_not_taken_over(scim, make_user):
    make_user(email="ceo@acme.com")
    scim_error(scim.scim("POST", "/Users", user_body("ceo@acme.com")), 409, "uniqueness")


def test_put_replaces_the_resource(scim):
    created = create(scim)
    body = user_body(displayName="Babs Jensen", externalId="ext-2")
    response = scim.scim("PUT", f"/Users/{created['id']}", body)
    assert response.status_code == 200, response.content
    assert response.json()["displayName"] == "Babs Jensen"
    assert users.name_of(users.find_by_email("bjensen@acme.com")) == "Babs Jensen"


def test_unknown_ids_are_404(scim):
    scim_error(scim.get_("/Users/nope"), 404)
    scim_error(scim.scim("DELETE", "/Users/nope"), 404)


def test_deactivation_ends_every_session_and_reactivation_lets_them_back(scim, api):
    created = create(scim)
    user = users.find_by_email("bjensen@acme.com")
    Session.objects.create(user=user, token="t1", expires_at="2999-01-01T00:00:00Z")
    response = scim.scim("PATCH", f"/Users/{created['id']}",
                         patch_body({"op": "replace", "path": "active", "value": False}))
    assert response.status_code == 200, response.content
    assert response.json()["active"] is False
    user.refresh_from_db()
    assert not user.is_active and not Session.objects.filter(user=user).exists()
    response = scim.scim("PATCH", f"/Users/{created['id']}",
                         patch_body({"op": "replace", "path": "active", "value": True}))
    user.refresh_from_db()
    assert user.is_active


def test_delete_removes_the_resource_and_deactivates_the_user(scim):
    created = create(scim)
    assert scim.scim("DELETE", f"/Users/{created['id']}").status_code == 204
    scim_error(scim.get_(f"/Users/{created['id']}"), 404)
    assert not users.find_by_email("bjensen@acme.com").is_active


def test_a_deleted_user_comes_back_with_the_same_account_on_a_new_post(scim):
    created = create(scim)
    user = users.find_by_email("bjensen@acme.com")
    scim.scim("DELETE", f"/Users/{created['id']}")
    again = create(scim)
    assert users.find_by_email("bjensen@acme.com").pk == user.pk
    assert users.find_by_email("bjensen@acme.com").is_active
    assert again["id"] == created["id"]


def test_list_pages_with_start_index_and_count(scim):
    for n in range(5):
        create(scim, f"user{n}@acme.com")
    body = scim.get_("/Users", {"startIndex": 2, "count": 2}).json()
    assert body["totalResults"] == 5 and body["startIndex"] == 2 and body["itemsPerPage"] == 2
    assert [r["userName"] for r in body["Resources"]] == ["user1@acme.com", "user2@acme.com"]


def test_attributes_and_excluded_attributes_project_the_answer(scim):
    created = create(scim)
    only = scim.get_(f"/Users/{created['id']}", {"attributes": "userName"}).json()
    assert set(only) == {"schemas", "id", "userName"}
    without = scim.get_(f"/Users/{created['id']}", {"excludedAttributes": "emails,name"}).json()
    assert "emails" not in without and "name" not in without and without["userName"]


def test_without_a_token_the_answer_is_401_in_the_error_schema(scim):
    scim.token = None
    response = scim.get_("/Users")
    scim_error(response, 401)
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_wrong_token_is_401(scim):
    scim.token = "x" * 40
    scim_error(scim.get_("/Users"), 401)


def test_invalid_json_is_invalid_syntax(scim):
    response = scim.generic("POST", "/api/auth/scim/v2/Users", b"{nope", content_type=SCIM,
                            HTTP_AUTHORIZATION=f"Bearer {scim.token}")
    scim_error(response, 400, "invalidSyntax")


def test_a_user_the_site_deactivated_stays_inactive_through_the_directorys_puts(scim):
    """Okta repeats active: true on every profile PUT; that does not undo a local deactivation."""
    created = create(scim)
    user = users.find_by_email("bjensen@acme.com")
    users.update(user, is_active=False)
    response = scim.scim("PUT", f"/Users/{created['id']}", user_body(displayName="Babs"))
    assert response.status_code == 200, response.content
    user.refresh_from_db()
    assert not user.is_active


def test_the_directory_reactivates_only_whom_it_deactivated(scim):
    created = create(scim)
    scim.scim("PATCH", f"/Users/{created['id']}", patch_body({"op": "replace", "path": "active", "value": False}))
    scim.scim("PATCH", f"/Users/{created['id']}", patch_body({"op": "replace", "path": "active", "value": True}))
    assert users.find_by_email("bjensen@acme.com").is_active



def test_a_site_deactivation_after_the_directorys_own_is_not_undone_by_the_directory(scim):
    """The site turned the user back on, then banned them: the ban is the site's, not the directory's."""
    created = create(scim)
    scim.scim("PATCH", f"/Users/{created['id']}", patch_body({"op": "replace", "path": "active", "value": False}))
    user = users.find_by_email("bjensen@acme.com")
    users.update(user, is_active=True)
    users.update(user, is_active=False)
    scim.scim("PATCH", f"/Users/{created['id']}", patch_body({"op": "replace", "path": "active", "value": True}))
    user.refresh_from_db()
    assert not user.is_active


def test_a_user_deleted_by_the_directory_comes_back_active_with_a_new_post(scim):
    created = create(scim)
    assert scim.scim("DELETE", f"/Users/{created['id']}").status_code == 204
    assert scim.scim("POST", "/Users", user_body()).status_code == 201
    assert users.find_by_email("bjensen@acme.com").is_active

@pytest.mark.parametrize("user_name", ["x@evil.com@acme.com", "bob @acme.com", "bob@acme.com\u0000"])
def test_a_user_name_used_as_address_must_be_one_address(scim, user_name):
    body = user_body(user_name)
    del body["emails"]
    assert scim.scim("POST", "/Users", body).status_code == 400


def test_a_huge_body_is_413(scim, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    scim_error(scim.scim("POST", "/Users", user_body(displayName="x" * 5000)), 413)
