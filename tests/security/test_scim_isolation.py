"""SCIM isolation: a token of connection A never reads or changes anything of connection B, and a
directory never takes over an account it did not provision (I1). Real database, real HTTP client."""

import pytest

from authservice import users
from authservice.models import Account, Session
from sso.models import Member
from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


@pytest.fixture
def two(provider_factory):
    """Connections A (acme.com) and B (globex.com), each with one user and one group."""
    from sso.scim import tokens

    clients = {}
    for name, domain in (("a", "acme.com"), ("b", "globex.com")):
        provider = provider_factory(f"prov-{name}", domain=domain)
        _, token = tokens.issue(provider)
        client = ScimClient(token)
        client.provider = provider
        response = client.scim("POST", "/Users", user_body(f"user@{domain}"))
        assert response.status_code == 201, response.content
        client.user_id = response.json()["id"]
        response = client.scim("POST", "/Groups", {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                                                   "displayName": f"group-{name}",
                                                   "members": [{"value": client.user_id}]})
        assert response.status_code == 201, response.content
        client.group_id = response.json()["id"]
        clients[name] = client
    return clients["a"], clients["b"]


def test_a_lists_only_its_own_users_and_groups(two):
    a, b = two
    assert [r["id"] for r in a.get_("/Users").json()["Resources"]] == [a.user_id]
    assert [r["id"] for r in a.get_("/Groups").json()["Resources"]] == [a.group_id]
    assert a.get_("/Users", {"filter": 'userName eq "user@globex.com"'}).json()["totalResults"] == 0


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
def test_a_cannot_reach_bs_user(two, method):
    a, b = two
    body = {"PUT": user_body("user@acme.com"), "PATCH": patch_body({"op": "replace", "path": "active", "value": False})}
    scim_error(a.scim(method, f"/Users/{b.user_id}", body.get(method)), 404)
    assert users.find_by_email("user@globex.com").is_active
    assert b.get_(f"/Users/{b.user_id}").status_code == 200


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
def test_a_cannot_reach_bs_group(two, method):
    a, b = two
    body = {"PUT": {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "x"},
            "PATCH": patch_body({"op": "remove", "path": "members"})}
    scim_error(a.scim(method, f"/Groups/{b.group_id}", body.get(method)), 404)
    assert [m["value"] for m in b.get_(f"/Groups/{b.group_id}").json()["members"]] == [b.user_id]


def test_a_cannot_put_bs_user_into_its_group(two):
    a, b = two
    response = a.scim("PATCH", f"/Groups/{a.group_id}",
                      patch_body({"op": "add", "path": "members", "value": [{"value": b.user_id}]}))
    scim_error(response, 400, "invalidValue")
    response = a.scim("POST", "/Groups", {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                                          "displayName": "grab", "members": [{"value": b.user_id}]})
    scim_error(response, 400, "invalidValue")


def test_a_cannot_create_or_rename_users_into_bs_domain(two):
    a, b = two
    scim_error(a.scim("POST", "/Users", user_body("intruder@globex.com")), 400, "invalidValue")
    response = a.scim("PATCH", f"/Users/{a.user_id}", patch_body(
        {"op": "replace", "path": 'emails[type eq "work"].value', "value": "user@globex.com"}))
    assert response.status_code in (400, 409), response.content
    assert users.find_by_email("user@globex.com").scim_users.get().connection.provider.provider_id == "prov-b"


def test_a_cannot_adopt_bs_user_even_with_the_same_domain(provider_factory, two):
    """A second connection for the same verified domain still cannot take over the first one's user."""
    from sso.scim import tokens

    a, b = two
    other = provider_factory("prov-c", domain="globex.com")
    _, token = tokens.issue(other)
    c = ScimClient(token)
    scim_error(c.scim("POST", "/Users", user_body("user@globex.com")), 409, "uniqueness")


def test_a_directory_cannot_take_over_a_local_account(scim, make_user):
    ceo = make_user(email="ceo@acme.com")
    Session.objects.create(user=ceo, token="ceo", expires_at="2999-01-01T00:00:00Z")
    scim_error(scim.scim("POST", "/Users", user_body("ceo@acme.com", active=False)), 409, "uniqueness")
    ceo.refresh_from_db()
    assert ceo.is_active and Session.objects.filter(user=ceo).exists()


def test_a_user_the_provider_already_signs_in_is_adopted(scim, make_user):
    sso_user = make_user(email="sso@acme.com", password=None)
    Account.objects.create(user=sso_user, provider_id=scim.provider.provider_id, account_id="sub-1")
    response = scim.scim("POST", "/Users", user_body("sso@acme.com"))
    assert response.status_code == 201, response.content
    assert scim.connection.users.get().user_id == sso_user.pk


def test_an_unverified_provider_provisions_no_one(provider_factory):
    from sso.scim import tokens

    provider = provider_factory("unverified", domain="acme.com", verified=False)
    _, token = tokens.issue(provider)
    scim_error(ScimClient(token).scim("POST", "/Users", user_body("x@acme.com")), 400, "invalidValue")
    assert users.find_by_email("x@acme.com") is None


def test_a_revoked_token_opens_nothing(scim):
    from sso.scim import tokens

    tokens.revoke(scim.connection)
    scim_error(scim.get_("/Users"), 401)


def test_a_rotated_token_replaces_the_old_one(scim):
    from sso.scim import tokens

    old = scim.token
    _, new = tokens.issue(scim.provider)
    scim_error(scim.get_("/Users"), 401)
    scim.token = new
    assert scim.get_("/Users").status_code == 200
    assert old != new


def test_the_token_is_stored_only_as_its_hash(scim):
    scim.connection.refresh_from_db()
    assert scim.token not in str(scim.connection.__dict__)


def test_scim_does_not_adopt_the_organizations_owner(scim, make_user):
    """An owner the provider signs in is not taken over by the directory (attack 14: an admin's token
    must not reach the one role above them), so it can neither demote nor remove them (§4)."""
    boss = make_user(email="boss@acme.com", password=None)
    Account.objects.create(user=boss, provider_id=scim.provider.provider_id, account_id="boss-sub")
    Member.objects.create(organization_id=scim.provider.organization_id, user=boss, role=Member.OWNER)
    response = scim.scim("POST", "/Users", user_body("boss@acme.com"))
    assert response.status_code == 409
    assert Member.objects.get(user=boss).role == Member.OWNER


def test_scim_never_demotes_nor_deletes_a_provisioned_user_made_owner(scim):
    """A provisioned user the organization later made its owner by hand keeps the role through the
    directory's groups, and a DELETE of them is refused (403) rather than locking the owner out."""
    created = scim.scim("POST", "/Users", user_body("boss@acme.com")).json()
    boss = users.find_by_email("boss@acme.com")
    Member.objects.filter(user=boss).update(role=Member.OWNER)
    group = scim.scim("POST", "/Groups", {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                                          "displayName": "staff", "members": [{"value": created["id"]}]})
    assert group.status_code == 201
    assert Member.objects.get(user=boss).role == Member.OWNER
    assert scim.scim("DELETE", f"/Users/{created['id']}").status_code == 403
    boss.refresh_from_db()
    assert boss.is_active
    assert Member.objects.get(user=boss).role == Member.OWNER


def test_deleting_a_user_removes_their_membership_but_not_an_owners(scim):
    created = scim.scim("POST", "/Users", user_body()).json()
    user = users.find_by_email("bjensen@acme.com")
    member = Member.objects.get(user=user)
    assert member.role == "member"
    assert scim.scim("DELETE", f"/Users/{created['id']}").status_code == 204
    assert not Member.objects.filter(user=user).exists()
    assert Member.objects.filter(role=Member.OWNER).exists()


# --- I6: what one request may cost ------------------------------------------------------------------------
def test_a_patch_of_the_most_operations_costs_under_100_ms_of_cpu(scim):
    import json
    import time

    from sso import app_settings as sso_settings

    created = scim.scim("POST", "/Users", user_body()).json()
    operations = [{"op": "replace", "path": "displayName", "value": "x" * 500}] * sso_settings.scim.max_operations
    body = patch_body(*operations)
    assert len(json.dumps(body)) < 64 * 1024
    started = time.process_time()
    response = scim.scim("PATCH", f"/Users/{created['id']}", body)
    cpu_ms = (time.process_time() - started) * 1000
    assert response.status_code == 200, response.content
    assert cpu_ms < 100, cpu_ms


def test_more_operations_than_the_limit_are_refused_before_any_is_applied(scim):
    from sso import app_settings as sso_settings

    created = scim.scim("POST", "/Users", user_body()).json()
    operations = [{"op": "replace", "path": "displayName", "value": "x"}] * (sso_settings.scim.max_operations + 1)
    scim_error(scim.scim("PATCH", f"/Users/{created['id']}", patch_body(*operations)), 400, "tooMany")
    scim_error(scim.scim("PATCH", f"/Users/{created['id']}".replace("Users", "Groups"), patch_body(*operations)), 400)
