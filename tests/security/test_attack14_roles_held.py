"""Attack 14, roles from IdP groups: attempts the service holds (regression guards).

The attacker runs or influences the IdP's group claims (types, look-alikes, volume), or is an
organization admin who lost the role and still tries to steer the mapping.
"""

import pytest

from sso.models import Member, Organization, SsoProvider
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, sign_in  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import authorize_params

pytestmark = pytest.mark.django_db

MAPPING = {"roleMapping": {"attribute": "groups", "values": {"okta-it-admins": "admin"}, "defaultRole": "member"}}


@pytest.fixture
def org(db):
    return Organization.objects.create(name="Acme", slug="acme")


@pytest.fixture
def stub(stub_idp, make_provider, org):
    make_provider("stub", stub_idp.issuer, stub_idp.oidc_config(), organization_id=org.pk,
                  organization_provisioning=MAPPING)
    return stub_idp


def via_stub(api, stub, **claims):
    response = api.api_post("/sign-in/sso", {"providerId": "stub", "callbackURL": "/d", "errorCallbackURL": "/oops"})
    assert response.status_code == 200, response.content
    params = authorize_params(response.json()["url"])
    stub.id_token = stub.sign(stub.claims(params["nonce"], **claims))
    done = api.get("/api/auth/sso/callback/stub", {"code": "c", "state": params["state"]})
    assert done["Location"] == "/d", done["Location"]  # signed in: the role is what is tested
    return done


def role(org):
    return Member.objects.get(organization=org).role


def test_a_fullwidth_look_alike_of_the_admin_group_gives_no_admin(api, stub, org):
    via_stub(api, stub, groups=["\uff4f\uff4b\uff54\uff41-it-admins"])
    assert role(org) == "member"


def test_a_case_variant_of_the_admin_group_gives_no_admin(api, stub, org):
    via_stub(api, stub, groups=["OKTA-IT-ADMINS"])
    assert role(org) == "member"


def test_the_admin_group_as_an_object_key_gives_no_admin(api, stub, org):
    via_stub(api, stub, groups={"okta-it-admins": True})
    assert role(org) == "member"


def test_the_admin_group_nested_in_a_list_gives_no_admin(api, stub, org):
    via_stub(api, stub, groups=[["okta-it-admins"]])
    assert role(org) == "member"


def test_the_admin_group_in_another_claim_gives_no_admin(api, stub, org):
    via_stub(api, stub, roles=["okta-it-admins"], group=["okta-it-admins"])
    assert role(org) == "member"


def test_a_demoted_admin_cannot_change_the_mapping_of_the_organizations_provider(sign_in):
    admin = sign_in("admin@acme.com")
    org_id = admin.api_post("/organization/create", {"name": "Acme", "slug": "acme"}).json()["id"]
    response = admin.api_post("/sso/register", skip_discovery_body(provider_id="acme", organizationId=org_id))
    assert response.status_code == 200, response.content
    Member.objects.filter(organization_id=org_id, user=admin.user).update(role="member")
    response = admin.api_post("/sso/update-provider", {"providerId": "acme", "organizationProvisioning": {
        "roleMapping": {"attribute": "groups", "values": {}, "defaultRole": "admin"}}})
    assert response.status_code == 403, error_of(response)
    assert SsoProvider.objects.get(provider_id="acme").organization_provisioning is None


def test_a_membership_the_organization_gave_by_hand_is_not_raised_by_the_groups(api, stub, org, make_user):
    user = make_user(email="eve@acme.com", email_verified=True)
    Member.objects.create(organization=org, user=user, role="member")
    via_stub(api, stub, groups=["okta-it-admins"])
    assert role(org) == "member"
