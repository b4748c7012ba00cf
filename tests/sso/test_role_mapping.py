"""Organization roles from the IdP's groups, decided before the session is issued (issue 14 §4).

The stub OP signs whatever claims a test asks for; the e2e tests at the end use the real peers
(oidc-provider for the OIDC ``groups`` claim, samlify for a SAML attribute).
"""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.dispatch import receiver

from authservice.errors import APIError, codes
from authservice.models import Session
from sso import roles, signals
from sso.models import Member, Organization, SsoProvider
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import authorize_params, callback_path, op_login

pytestmark = pytest.mark.django_db

MAPPING = {"roleMapping": {"attribute": "groups", "values": {"it-admins": "admin", "staff": "member"},
                           "defaultRole": "member"}}
SEEN = []


def admin_role(**kwargs):
    return "admin"


def refuse_role(**kwargs):
    raise APIError(403, codes.FORBIDDEN, "No role for you")


def count_sessions(**kwargs):
    SEEN.append(Session.objects.filter(user=kwargs["user"]).count())
    return "member"


@pytest.fixture(autouse=True)
def _clear():
    SEEN.clear()


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
    params = authorize_params(response.json()["url"])
    stub.id_token = stub.sign(stub.claims(params["nonce"], **claims))
    return api.get("/api/auth/sso/callback/stub", {"code": "c", "state": params["state"]})


def role(org):
    return Member.objects.get(organization=org).role


# --- role_for_groups -------------------------------------------------------------------------------------
def provider_with(mapping):
    return SsoProvider(provider_id="p", organization_provisioning={"roleMapping": mapping})


def test_a_mapped_group_gives_its_role():
    assert roles.role_for_groups(provider_with(MAPPING["roleMapping"]), ["it-admins"]) == "admin"


def test_the_strongest_role_of_several_groups_wins():
    assert roles.role_for_groups(provider_with(MAPPING["roleMapping"]), ["staff", "it-admins", "x"]) == "admin"


def test_no_matching_group_gives_the_mappings_default_role():
    mapping = {"attribute": "groups", "values": {"it-admins": "admin"}, "defaultRole": "admin"}
    assert roles.role_for_groups(provider_with(mapping), ["other"]) == "admin"


def test_without_a_default_the_deployments_default_role_applies(configure_sso):
    configure_sso(organization_provisioning={"default_role": "admin"})
    assert roles.role_for_groups(provider_with({"attribute": "groups", "values": {}}), []) == "admin"


def test_group_names_match_exactly():
    assert roles.role_for_groups(provider_with(MAPPING["roleMapping"]), ["IT-Admins", " it-admins"]) == "member"


def test_groups_are_read_from_a_list_or_a_single_value():
    provider = provider_with(MAPPING["roleMapping"])
    assert roles.groups_from_user_info(provider, {"attributes": {"groups": ["a", 7, {"x": 1}, "b"]}}) == ["a", "b"]
    assert roles.groups_from_user_info(provider, {"attributes": {"groups": "it-admins"}}) == ["it-admins"]
    assert roles.groups_from_user_info(provider, {"attributes": {}}) == []
    assert roles.groups_from_user_info(SsoProvider(provider_id="p"), {"attributes": {"groups": ["a"]}}) is None


# --- sign-in -------------------------------------------------------------------------------------------
def test_the_groups_claim_decides_the_role_of_a_new_member(api, stub, org):
    via_stub(api, stub, groups=["it-admins"])
    member = Member.objects.get(organization=org)
    assert member.role == "admin" and member.managed_by == SsoProvider.objects.get(provider_id="stub").pk


def test_the_first_request_after_sign_in_sees_the_membership_and_role(api, stub, org):
    via_stub(api, stub, groups=["it-admins"])
    response = api.api_get("/organization/list-members", {"organizationId": org.pk})
    assert response.status_code == 200, response.content
    assert [member["role"] for member in response.json()["members"]] == ["admin"]


def test_removed_from_the_group_the_role_goes_on_the_next_sign_in(api, stub, org):
    via_stub(api, stub, groups=["it-admins"])
    via_stub(api, stub, groups=["staff"])
    assert role(org) == "member"


def test_added_to_the_group_the_role_comes_on_the_next_sign_in(api, stub, org):
    via_stub(api, stub, groups=[])
    via_stub(api, stub, groups=["it-admins"])
    assert role(org) == "admin"


def test_a_role_change_sends_member_role_changed_after_the_commit(api, stub, org):
    received = []

    @receiver(signals.member_role_changed, weak=False)
    def capture(sender, member, previous_role, provider, **kwargs):
        received.append((previous_role, member.role, provider.provider_id))

    try:
        via_stub(api, stub, groups=["it-admins"])
        via_stub(api, stub, groups=[])
    finally:
        signals.member_role_changed.disconnect(capture)
    assert received == [("admin", "member", "stub")]


def test_an_owner_is_never_demoted(api, stub, org):
    via_stub(api, stub, groups=["it-admins"])
    Member.objects.filter(organization=org).update(role="owner")
    via_stub(api, stub, groups=[])
    assert role(org) == "owner"


def test_a_membership_sso_did_not_create_keeps_its_role(api, stub, org, django_user_model):
    via_stub(api, stub, groups=["it-admins"])
    Member.objects.filter(organization=org).update(managed_by="")  # e.g. added by an invitation
    via_stub(api, stub, groups=[])
    assert role(org) == "admin"


def test_without_a_mapping_or_hook_an_existing_role_is_left_alone(api, stub, org):
    SsoProvider.objects.filter(provider_id="stub").update(organization_provisioning=None)
    via_stub(api, stub)
    Member.objects.filter(organization=org).update(role="admin")
    via_stub(api, stub)
    assert role(org) == "admin"


def test_get_role_still_wins_over_the_mapping(api, stub, org, configure_sso):
    configure_sso(organization_provisioning={"get_role": "tests.sso.test_role_mapping.admin_role"})
    via_stub(api, stub, groups=["staff"])
    assert role(org) == "admin"


def test_get_role_runs_inside_the_sign_in_with_the_session_already_written(api, stub, org, configure_sso):
    configure_sso(organization_provisioning={"get_role": "tests.sso.test_role_mapping.count_sessions"})
    via_stub(api, stub)
    assert SEEN == [1]


def test_a_failing_get_role_leaves_no_session_and_no_membership(api, stub, org, configure_sso):
    configure_sso(organization_provisioning={"get_role": "tests.sso.test_role_mapping.refuse_role"})
    response = via_stub(api, stub, groups=["it-admins"])
    assert parse_qs(urlsplit(response["Location"]).query)["error"] == ["FORBIDDEN"]
    assert not Session.objects.exists()
    assert not Member.objects.exists()


# --- registration and update --------------------------------------------------------------------------
def test_register_stores_and_returns_the_mapping(sign_in_client):
    response = sign_in_client.api_post("/sso/register", skip_discovery_body(organizationProvisioning=MAPPING))
    assert response.status_code == 200, response.content
    assert response.json()["organizationProvisioning"] == MAPPING
    assert SsoProvider.objects.get().organization_provisioning == MAPPING
    got = sign_in_client.api_get("/sso/get-provider", {"providerId": "acme"}).json()
    assert got["organizationProvisioning"] == MAPPING


def test_update_replaces_and_null_removes_the_mapping(sign_in_client):
    sign_in_client.api_post("/sso/register", skip_discovery_body(organizationProvisioning=MAPPING))
    changed = {"roleMapping": {"attribute": "roles", "values": {"x": "admin"}}}
    response = sign_in_client.api_post("/sso/update-provider", {"providerId": "acme",
                                                                "organizationProvisioning": changed})
    assert response.json()["organizationProvisioning"] == changed
    sign_in_client.api_post("/sso/update-provider", {"providerId": "acme", "organizationProvisioning": None})
    assert SsoProvider.objects.get().organization_provisioning is None


@pytest.mark.parametrize("value", [
    {"roleMapping": {"attribute": "groups", "values": {"it": "owner"}}},
    {"roleMapping": {"attribute": "groups", "defaultRole": "owner"}},
    {"roleMapping": {"values": {"it": "admin"}}},
    {"roleMapping": {"attribute": "groups", "values": ["it"]}},
    {"roleMapping": {"attribute": "groups", "extra": 1}},
    {"other": {}},
    "groups",
])
def test_a_bad_mapping_is_a_validation_error(sign_in_client, value):
    response = sign_in_client.api_post("/sso/register", skip_discovery_body(organizationProvisioning=value))
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert not SsoProvider.objects.exists()


@pytest.fixture
def sign_in_client(sign_in):
    return sign_in()


# --- real peers ------------------------------------------------------------------------------------------
@pytest.mark.e2e
def test_oidc_provider_groups_claim_decides_the_role(api, trusted_op, make_provider, org):
    mapping = {"roleMapping": {"attribute": "groups", "values": {"admins": "admin"}}}
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config(
        "acme", scopes=["openid", "email", "profile", "groups"]), organization_id=org.pk,
        organization_provisioning=mapping)
    response = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/d"})
    api.get(*callback_path(op_login(response.json()["url"], "ada@acme.com")))
    member = Member.objects.get(organization=org)
    assert member.user.email == "ada@acme.com" and member.role == "admin"


def test_a_provider_registered_again_under_the_same_id_does_not_inherit_the_old_ones_memberships(
        api, stub, org, make_provider):
    # managed_by names the provider row, not its providerId: whoever registers "stub" after the old
    # one is deleted (in the same organization) must not take over the roles the old one managed.
    via_stub(api, stub, groups=["it-admins"])
    SsoProvider.objects.get(provider_id="stub").delete()
    make_provider("stub", stub.issuer, stub.oidc_config(), organization_id=org.pk, organization_provisioning=MAPPING)
    via_stub(api, stub, groups=["staff"])
    assert role(org) == "admin"


@pytest.mark.parametrize("group", [" okta-it-admins", "okta-it-admins\u00a0", "okta-it-admins\n"])
def test_a_mapping_key_with_leading_or_trailing_spaces_is_refused_not_stripped(group):
    # Names are compared exactly at sign-in, so a padded key would name a different group.
    from rest_framework import serializers

    from sso import roles

    with pytest.raises(serializers.ValidationError):
        roles.validate_mapping({"roleMapping": {"attribute": "groups", "values": {group: "admin"}}})
