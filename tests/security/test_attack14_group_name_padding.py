"""Attack 14, roles from IdP groups: a look-alike group name padded with whitespace is read as the
mapped admin group (issue 14 §4, docs/sso-roles.md: "Values are matched exactly as the IdP sends them").

docs/sso-roles.md warns that some IdPs let users name their own groups, and promises an exact match
with no folding. A user who may create groups cannot create a second ``okta-it-admins`` (group names
are unique at the IdP), but can create ``okta-it-admins\\u00a0`` or ``\\u3000okta-it-admins``: a different
group to the IdP. ``sso.roles.groups_from_user_info`` strips every value (``str.strip()`` removes
Unicode spaces too) before ``role_for_groups`` compares, so that self-made group is taken for the
real admin group and the user becomes an organization admin: an escalation through a crafted group
claim. (``role_for_groups`` alone compares exactly, so ``test_group_names_match_exactly`` does not
see it: the sign-in path goes through ``groups_from_user_info``.)

Fix at the mechanism: compare the claim's values exactly as sent (no strip on the sign-in side), and
refuse mapping keys that carry leading or trailing whitespace instead of stripping them.
"""

import pytest

from sso.models import Member, Organization
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
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
    return api.get("/api/auth/sso/callback/stub", {"code": "c", "state": params["state"]})


def test_a_group_named_like_the_admin_group_with_a_trailing_nbsp_gives_no_admin(api, stub, org):
    via_stub(api, stub, groups=["okta-it-admins\u00a0"])
    assert Member.objects.get(organization=org).role == "member"


def test_a_group_named_like_the_admin_group_with_an_ideographic_space_gives_no_admin(api, stub, org):
    via_stub(api, stub, groups=["\u3000okta-it-admins"])
    assert Member.objects.get(organization=org).role == "member"
