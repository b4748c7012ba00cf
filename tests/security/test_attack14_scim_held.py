"""Attack 14 (SCIM) attempts that the service withstood: kept as regression guards.

Each names the invariant it guards. The cross-connection isolation and token tests live in
tests/security/test_scim_isolation.py and tests/sso/scim/test_scim_tokens.py; these add the address
games, the deactivation of a signed-in user, and the filter/paging inputs.
"""

import time

import pytest

from authservice import users
from authservice.models import Account, Session
from tests.conftest import PASSWORD, ApiClient
from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def test_patching_an_own_users_address_to_a_victims_in_another_case_is_refused(scim, make_user):
    """I1: a directory cannot move its user onto a local account's address (case folded)."""
    victim = make_user(email="victim@acme.com")
    scim_id = scim.scim("POST", "/Users", user_body("me@acme.com")).json()["id"]
    response = scim.scim("PATCH", f"/Users/{scim_id}", patch_body(
        {"op": "replace", "path": "emails", "value": [{"value": "VICTIM@ACME.COM", "type": "work"}]}))
    scim_error(response, 409, "uniqueness")
    assert users.find_by_email("victim@acme.com").pk == victim.pk
    assert users.find_by_email("me@acme.com") is not None


def test_put_replacing_emails_with_a_victims_address_is_refused(scim, make_user):
    """I1: PUT, Okta's update, is held to the same rule as PATCH."""
    make_user(email="victim@acme.com")
    scim_id = scim.scim("POST", "/Users", user_body("me@acme.com")).json()["id"]
    body = user_body("me@acme.com", emails=[{"value": "Victim@Acme.com", "type": "work", "primary": True}])
    scim_error(scim.scim("PUT", f"/Users/{scim_id}", body), 409, "uniqueness")


def test_re_post_after_delete_cannot_adopt_another_account(scim, make_user):
    """I1: the deleted resource's userName does not carry over to a different local account."""
    victim = make_user(email="victim@acme.com")
    Session.objects.create(user=victim, token="victim-session", expires_at="2999-01-01T00:00:00Z")
    scim_id = scim.scim("POST", "/Users", user_body("old@acme.com")).json()["id"]
    assert scim.scim("DELETE", f"/Users/{scim_id}").status_code == 204
    body = user_body("old@acme.com", emails=[{"value": "victim@acme.com", "type": "work"}], active=False)
    scim_error(scim.scim("POST", "/Users", body), 409, "uniqueness")
    victim.refresh_from_db()
    assert victim.is_active and Session.objects.filter(user=victim).exists()


def test_a_secondary_address_in_a_foreign_domain_touches_no_account(scim, make_user):
    """I1: only the chosen (work) address is checked against the verified domains, and only it is used:
    a home address of someone else's domain neither creates nor changes that account."""
    ceo = make_user(email="ceo@victim.com")
    body = user_body("x@acme.com", emails=[{"value": "x@acme.com", "type": "work"},
                                           {"value": "ceo@victim.com", "type": "home", "primary": True}],
                     active=False)
    assert scim.scim("POST", "/Users", body).status_code == 201
    ceo.refresh_from_db()
    assert ceo.is_active and not ceo.scim_users.exists()
    found = scim.get_("/Users", {"filter": 'emails.value eq "ceo@victim.com"'}).json()
    assert found["totalResults"] == 0


def test_a_foreign_primary_address_is_refused(scim, make_user):
    """I1: the address the user is keyed by must be in the provider's verified domains."""
    make_user(email="ceo@victim.com")
    body = user_body("y@acme.com", emails=[{"value": "ceo@victim.com", "primary": True}])
    scim_error(scim.scim("POST", "/Users", body), 400, "invalidValue")


def test_deactivating_ends_sessions_and_password_sign_in_at_once(scim, make_user):
    """I1: active=false ends an existing session (cookie) and refuses the password at once."""
    person = make_user(email="person@acme.com")
    Account.objects.create(user=person, provider_id=scim.provider.provider_id, account_id="sub-person")
    browser = ApiClient()
    assert browser.api_post("/sign-in/email", {"email": "person@acme.com", "password": PASSWORD}).status_code == 200
    assert browser.api_get("/get-session").json()["user"]["email"] == "person@acme.com"
    scim_id = scim.scim("POST", "/Users", user_body("person@acme.com")).json()["id"]
    response = scim.scim("PATCH", f"/Users/{scim_id}", patch_body({"op": "replace", "value": {"active": "False"}}))
    assert response.status_code == 200, response.content
    assert not Session.objects.filter(user=person).exists()
    assert browser.api_get("/get-session").content == b"null"
    again = ApiClient().api_post("/sign-in/email", {"email": "person@acme.com", "password": PASSWORD})
    assert again.status_code in (401, 403), again.content


def test_deeply_nested_and_long_filters_are_cheap_400s(scim):
    """I6: the filter grammar bounds nesting and length before any work."""
    nested = "not (" * 300 + 'userName eq "a"' + ")" * 300
    scim_error(scim.get_("/Users", {"filter": nested[:2000]}), 400, "invalidFilter")
    scim_error(scim.get_("/Users", {"filter": " or ".join(['userName co "a"'] * 200)}), 400, "invalidFilter")
    started = time.process_time()
    response = scim.get_("/Users", {"filter": " or ".join(['userName co "a"'] * 120)})
    assert response.status_code in (200, 400), response.content
    assert (time.process_time() - started) * 1000 < 100


def test_a_nul_byte_in_user_name_is_no_500(scim):
    """I6/I4: a value the database cannot hold is a clean answer, never a 500 (PostgreSQL answers 400)."""
    response = scim.scim("POST", "/Users", user_body("nul@acme.com", userName="x\u0000y"))
    assert response.status_code in (201, 400), response.content


def test_deep_paging_is_an_empty_page_not_an_error(scim):
    """I6: a huge startIndex is one index scan and an empty page."""
    response = scim.get_("/Users", {"startIndex": "999999999999999999", "count": "100"})
    assert response.status_code == 200
    assert response.json()["Resources"] == []
    scim_error(scim.get_("/Users", {"startIndex": "9" * 40}), 400, "invalidValue")


@pytest.fixture
def mapped(scim):
    provider = scim.provider
    provider.organization_provisioning = {"roleMapping": {"attribute": "groups", "values": {"admins": "admin"}}}
    provider.save()
    return scim


@pytest.mark.parametrize("name", ["Admins", "admins ", "admins\u00a0", " admins", "ADMINS", "admins\u200b"])
def test_a_look_alike_group_name_does_not_make_an_admin(mapped, name):
    """Roles: SCIM group names meet the role mapping exactly, as sign-in claims do (attack 14 padding)."""
    from sso.models import Member

    scim_id = mapped.scim("POST", "/Users", user_body("p@acme.com")).json()["id"]
    response = mapped.scim("POST", "/Groups", {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                                               "displayName": name, "members": [{"value": scim_id}]})
    assert response.status_code == 201, response.content
    assert Member.objects.get(user=users.find_by_email("p@acme.com")).role == "member"


def test_a_hand_made_admin_is_not_demoted_by_the_directory(mapped, make_user):
    """Roles: a membership an organization admin made by hand is the organization's, not the directory's."""
    from sso.models import Member

    person = make_user(email="lead@acme.com", password=None)
    Account.objects.create(user=person, provider_id=mapped.provider.provider_id, account_id="sub-lead")
    Member.objects.create(organization_id=mapped.provider.organization_id, user=person, role=Member.ADMIN)
    scim_id = mapped.scim("POST", "/Users", user_body("lead@acme.com")).json()["id"]
    mapped.scim("POST", "/Groups", {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                                    "displayName": "everyone", "members": [{"value": scim_id}]})
    assert Member.objects.get(user=person).role == Member.ADMIN
    assert mapped.scim("DELETE", f"/Users/{scim_id}").status_code == 204
    assert Member.objects.get(user=person).role == Member.ADMIN


def test_a_stranger_cannot_revoke_another_providers_connection(provider, make_user, scim):
    """A token's life is decided by the provider's managers only (sso/endpoints/scim.py)."""
    stranger = make_user(email="stranger@example.net")
    browser = ApiClient()
    assert browser.api_post("/sign-in/email", {"email": stranger.email, "password": PASSWORD}).status_code == 200
    response = browser.api_post("/scim/delete-provider-connection", {"providerId": provider.provider_id})
    assert response.status_code in (403, 404)
    response = browser.api_post("/scim/generate-token", {"providerId": provider.provider_id})
    assert response.status_code in (403, 404)
    assert scim.get_("/Users").status_code == 200
