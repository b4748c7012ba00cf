"""provisionUser and organization membership after every SSO sign-in (sso.md §8)."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.dispatch import receiver

from authservice.errors import APIError, codes
from authservice.models import Session
from sso import signals
from sso.models import Member, Organization
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import authorize_params, callback_path, op_login

pytestmark = pytest.mark.django_db

CALLS = []


def record_provision(**kwargs):
    CALLS.append(kwargs)


def refuse_provision(**kwargs):
    raise APIError(403, codes.FORBIDDEN, "Not allowed here")


def admin_role(**kwargs):
    CALLS.append(kwargs)
    return "admin"


def owner_role(**kwargs):
    return "owner"


@pytest.fixture(autouse=True)
def _clear_calls():
    CALLS.clear()
    yield
    CALLS.clear()


@pytest.fixture
def org(db):
    return Organization.objects.create(name="Acme", slug="acme")


@pytest.fixture
def stub(stub_idp, make_provider, org):
    make_provider("stub", stub_idp.issuer, stub_idp.oidc_config(mapping={
        "email": "email", "name": "name", "extraFields": {"department": "dept"}}), organization_id=org.pk)
    return stub_idp


def sign_in_via_stub(api, stub, **claims):
    response = api.api_post("/sign-in/sso", {"providerId": "stub", "callbackURL": "/d", "errorCallbackURL": "/oops"})
    params = authorize_params(response.json()["url"])
    stub.id_token = stub.sign(stub.claims(params["nonce"], **claims))
    return api.get("/api/auth/sso/callback/stub", {"code": "c", "state": params["state"]})


def test_provision_user_runs_on_every_sign_in_and_is_told_whether_the_user_is_new(api, stub, configure_sso):
    configure_sso(provision_user="tests.sso.test_provisioning.record_provision")
    sign_in_via_stub(api, stub)
    sign_in_via_stub(api, stub)
    assert [call["is_new_user"] for call in CALLS] == [True, False]
    assert CALLS[0]["user"].email == "eve@acme.com"
    assert CALLS[0]["provider"].provider_id == "stub"


def test_provision_user_runs_only_for_a_new_user_when_every_login_is_off(api, stub, configure_sso):
    configure_sso(provision_user="tests.sso.test_provisioning.record_provision", provision_user_on_every_login=False)
    sign_in_via_stub(api, stub)
    sign_in_via_stub(api, stub)
    assert [call["is_new_user"] for call in CALLS] == [True]


def test_provision_user_gets_mapped_info_raw_claims_and_the_token_set(api, stub, configure_sso):
    configure_sso(provision_user="tests.sso.test_provisioning.record_provision")
    sign_in_via_stub(api, stub, dept="R&D", groups=["a", "b"])
    info = CALLS[0]["user_info"]
    assert info["id"] == "stub-user-1"
    assert info["email"] == "eve@acme.com"
    assert info["department"] == "R&D"
    assert info["attributes"]["groups"] == ["a", "b"]
    assert info["attributes"]["iss"] == stub.issuer
    assert set(CALLS[0]["token"]) == {"accessToken", "refreshToken", "idToken", "accessTokenExpiresAt",
                                      "refreshTokenExpiresAt", "scopes", "tokenType"}
    assert CALLS[0]["token"]["accessToken"] == "stub-access"


def test_provision_user_runs_after_the_session_and_its_membership_exist(api, stub, configure_sso):
    seen = {}

    def check(**kwargs):
        seen["sessions"] = Session.objects.filter(user=kwargs["user"]).count()
        seen["members"] = Member.objects.filter(user=kwargs["user"]).count()

    configure_sso(provision_user=check)
    sign_in_via_stub(api, stub)
    assert seen == {"sessions": 1, "members": 1}


def test_provisioning_is_also_a_signal(api, stub):
    received = []

    @receiver(signals.user_provisioned)
    def on_provisioned(sender, **kwargs):
        received.append(kwargs)

    try:
        sign_in_via_stub(api, stub)
    finally:
        signals.user_provisioned.disconnect(on_provisioned)
    assert received[0]["is_new_user"] is True
    assert received[0]["user_info"]["attributes"]["sub"] == "stub-user-1"


def test_a_hook_refusing_with_a_coded_error_leaves_no_session(api, stub, configure_sso):
    configure_sso(provision_user="tests.sso.test_provisioning.refuse_provision")
    response = sign_in_via_stub(api, stub)
    query = parse_qs(urlsplit(response["Location"]).query)
    assert query == {"error": ["FORBIDDEN"], "error_description": ["Not allowed here"]}
    assert not Session.objects.exists()
    assert "auth.session_token" not in api.cookies


def test_the_user_joins_the_providers_organization_with_the_default_role(api, stub, org):
    sign_in_via_stub(api, stub)
    member = Member.objects.get(organization=org)
    assert member.user.email == "eve@acme.com"
    assert member.role == "member"


def test_membership_is_added_once(api, stub, org):
    sign_in_via_stub(api, stub)
    sign_in_via_stub(api, stub)
    assert Member.objects.filter(organization=org).count() == 1


def test_an_existing_membership_keeps_its_role(api, stub, org, configure_sso):
    sign_in_via_stub(api, stub)
    Member.objects.filter(organization=org).update(role="owner")
    configure_sso(organization_provisioning={"get_role": "tests.sso.test_provisioning.admin_role"})
    sign_in_via_stub(api, stub)
    assert Member.objects.get(organization=org).role == "owner"


def test_get_role_chooses_the_role(api, stub, org, configure_sso):
    configure_sso(organization_provisioning={"get_role": "tests.sso.test_provisioning.admin_role"})
    sign_in_via_stub(api, stub)
    assert Member.objects.get(organization=org).role == "admin"
    assert set(CALLS[0]) == {"user", "user_info", "token", "provider"}


def test_get_role_cannot_make_an_owner(api, stub, org, configure_sso):
    configure_sso(organization_provisioning={"get_role": "tests.sso.test_provisioning.owner_role"})
    sign_in_via_stub(api, stub)
    assert Member.objects.get(organization=org).role == "member"


def test_the_default_role_is_a_setting(api, stub, org, configure_sso):
    configure_sso(organization_provisioning={"default_role": "admin"})
    sign_in_via_stub(api, stub)
    assert Member.objects.get(organization=org).role == "admin"


def test_organization_provisioning_can_be_disabled(api, stub, org, configure_sso):
    configure_sso(organization_provisioning={"disabled": True})
    sign_in_via_stub(api, stub)
    assert not Member.objects.exists()


def test_no_membership_without_the_organization_feature(api, stub, org, configure_sso):
    configure_sso(organization={"enabled": False})
    sign_in_via_stub(api, stub)
    assert not Member.objects.exists()


def test_a_new_membership_sends_member_added(api, stub, org):
    received = []

    @receiver(signals.member_added)
    def on_member(sender, member, **kwargs):
        received.append(member)

    try:
        sign_in_via_stub(api, stub)
    finally:
        signals.member_added.disconnect(on_member)
    assert [member.organization_id for member in received] == [org.pk]


@pytest.mark.e2e
def test_attributes_are_the_real_providers_raw_claims(api, trusted_op, make_provider, configure_sso):
    configure_sso(provision_user="tests.sso.test_provisioning.record_provision")
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config(
        "acme", scopes=["openid", "email", "profile", "groups"], mapping={"email": "email", "name": "name",
                                                                          "extraFields": {"teams": "groups"}}))
    response = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/d"})
    api.get(*callback_path(op_login(response.json()["url"], "ada@acme.com")))
    info = CALLS[0]["user_info"]
    assert info["teams"] == ["eng", "admins"]
    assert info["attributes"]["email"] == "Ada@Acme.com"
    assert info["attributes"]["sub"] == "ada@acme.com"
