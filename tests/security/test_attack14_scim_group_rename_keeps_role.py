"""A SCIM group renamed away from the admin mapping keeps its members admins (attack 14, SCIM roles).

A member's organization role comes from the display names of the connection's groups they are in,
through the provider's roleMapping (sso/scim/membership.py, docs/scim.md "Groups and roles"). But
``groups.Changes.save`` re-syncs only the members *added or removed* by the request
(``membership.sync_many(connection, set(self.added) | self.removed)``): a PATCH or PUT that changes the
group's ``displayName`` re-decides nobody. When the IdP renames its "admins" group (or Okta/Entra push a
rename after the directory admin retires it), every member stays an organization admin, and a later
sign-in is the only thing that would correct it. The role no longer follows the directory: privilege
that the IdP took away survives (the invariant behind I1's "statement from a trusted authority": the
authority now says "not admin").

Fix at the mechanism: a change of ``displayName`` re-syncs every member of the group (one
``sync_many`` over ``group.memberships``), as DELETE of the group already does.
"""

import pytest

from authservice import users
from sso.models import Member
from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    GROUP_URN, ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_group(scim):
    provider = scim.provider
    provider.organization_provisioning = {"roleMapping": {"attribute": "groups", "values": {"admins": "admin"}}}
    provider.save()
    user_id = scim.scim("POST", "/Users", user_body("it@acme.com")).json()["id"]
    response = scim.scim("POST", "/Groups", {"schemas": [GROUP_URN], "displayName": "admins",
                                             "members": [{"value": user_id}]})
    assert response.status_code == 201, response.content
    member = Member.objects.get(user=users.find_by_email("it@acme.com"))
    assert member.role == "admin"
    return response.json()["id"], member


def test_renaming_the_admin_group_by_patch_takes_the_admin_role_away(scim, admin_group):
    group_id, member = admin_group
    response = scim.scim("PATCH", f"/Groups/{group_id}",
                         patch_body({"op": "replace", "path": "displayName", "value": "former-admins"}))
    assert response.status_code == 204, response.content
    member.refresh_from_db()
    assert member.role == "member", "the group no longer maps to admin, its members must not stay admins"


def test_renaming_the_admin_group_by_put_takes_the_admin_role_away(scim, admin_group):
    group_id, member = admin_group
    user_id = scim.get_(f"/Groups/{group_id}").json()["members"][0]["value"]
    response = scim.scim("PUT", f"/Groups/{group_id}", {"schemas": [GROUP_URN], "displayName": "everyone",
                                                        "members": [{"value": user_id}]})
    assert response.status_code == 200, response.content
    member.refresh_from_db()
    assert member.role == "member", "the group no longer maps to admin, its members must not stay admins"
