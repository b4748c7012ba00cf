"""An IdP's groups never make or unmake an owner (issue 14 §4).

Whoever administers the IdP controls its group claims: an attacker who runs the IdP of a provider
(or a compromised IdP admin) must not take over the organization through them, nor lock its owner
out, nor re-role memberships another provider or a human decided.
"""

import time

import pytest

from sso import roles
from sso.models import Member, Organization, SsoProvider
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, sign_in  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import authorize_params

pytestmark = pytest.mark.django_db


def owner_role(**kwargs):
    return "owner"


@pytest.fixture
def org(db):
    return Organization.objects.create(name="Acme", slug="acme")


def stub_with(stub_idp, make_provider, org, values, default=None):
    mapping = {"attribute": "groups", "values": values}
    if default:
        mapping["defaultRole"] = default
    make_provider("stub", stub_idp.issuer, stub_idp.oidc_config(), organization_id=org.pk,
                  organization_provisioning={"roleMapping": mapping})
    return stub_idp


def via_stub(api, stub, **claims):
    response = api.api_post("/sign-in/sso", {"providerId": "stub", "callbackURL": "/d"})
    params = authorize_params(response.json()["url"])
    stub.id_token = stub.sign(stub.claims(params["nonce"], **claims))
    return api.get("/api/auth/sso/callback/stub", {"code": "c", "state": params["state"]})


def test_a_mapping_to_owner_cannot_be_registered(sign_in):
    body = skip_discovery_body(organizationProvisioning={"roleMapping": {"attribute": "groups",
                                                                         "values": {"owners": "owner"}}})
    response = sign_in().api_post("/sso/register", body)
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_a_stored_mapping_to_owner_still_gives_no_owner(api, stub_idp, make_provider, org):
    # Written around the API (a raw SQL edit, an old row): the sign-in refuses it all the same.
    stub = stub_with(stub_idp, make_provider, org, {"owners": "owner", "Owner": "OWNER"}, default="owner")
    via_stub(api, stub, groups=["owners", "Owner"])
    assert Member.objects.get(organization=org).role == "member"


def test_a_group_named_owner_gives_no_owner(api, stub_idp, make_provider, org):
    stub = stub_with(stub_idp, make_provider, org, {"it": "admin"})
    via_stub(api, stub, groups=["owner", "owner,admin"])
    assert Member.objects.get(organization=org).role == "member"


def test_get_role_returning_owner_gives_the_default(api, stub_idp, make_provider, org, configure_sso):
    configure_sso(organization_provisioning={"get_role": "tests.security.test_role_mapping_owner.owner_role"})
    stub = stub_with(stub_idp, make_provider, org, {"it": "admin"})
    via_stub(api, stub, groups=["it"])
    assert Member.objects.get(organization=org).role == "member"


def test_the_idp_cannot_demote_an_owner_it_once_added(api, stub_idp, make_provider, org):
    stub = stub_with(stub_idp, make_provider, org, {"it": "admin"})
    via_stub(api, stub, groups=["it"])
    Member.objects.filter(organization=org).update(role="owner")  # promoted by a human since
    via_stub(api, stub, groups=[])
    assert Member.objects.get(organization=org).role == "owner"


def test_a_comma_list_role_with_owner_is_left_alone(api, stub_idp, make_provider, org):
    stub = stub_with(stub_idp, make_provider, org, {"it": "admin"})
    via_stub(api, stub, groups=["it"])
    Member.objects.filter(organization=org).update(role="admin,owner")
    via_stub(api, stub, groups=[])
    assert Member.objects.get(organization=org).role == "admin,owner"


def test_a_provider_does_not_re_role_a_membership_another_provider_manages(api, stub_idp, make_provider, org):
    stub = stub_with(stub_idp, make_provider, org, {"it": "admin"})
    via_stub(api, stub, groups=["it"])
    Member.objects.filter(organization=org).update(managed_by="other-provider")
    via_stub(api, stub, groups=[])
    assert Member.objects.get(organization=org).role == "admin"


def test_a_huge_group_list_costs_little(db):
    # I6: the IdP decides the size of the claim; only the first MAX_GROUPS are looked at.
    provider = SsoProvider(provider_id="p", organization_provisioning={"roleMapping": {
        "attribute": "groups", "values": {f"g{i}": "admin" for i in range(200)}}})
    groups = [f"x{i}" for i in range(500_000)] + ["g1"]
    started = time.process_time()
    found = roles.role_for_groups(provider, roles.groups_from_user_info(provider, {"attributes": {"groups": groups}}))
    assert time.process_time() - started < 0.1
    assert found == "member"  # g1 lies past the bound
