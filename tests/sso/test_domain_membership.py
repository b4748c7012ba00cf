"""Organization membership by e-mail domain after a social sign-in (sso.md §8, last paragraph).

Each test drives the real social OAuth flow (POST /sign-in/social, then the callback) against the stub
OpenID provider of tests/peers/social.py; the SSO providers and their domain rows are real rows.
"""

from urllib.parse import urlsplit

import pytest

from authservice import users
from authservice.errors import APIError, codes
from authservice.models import Session
from sso import signals
from sso.models import Member, Organization, SsoProvider, SsoProviderDomain
from tests.peers.social import _stub_server, corp, query_of, sign_in_with_corp, stub  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import make_provider  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

ROLE_CALLS = []
MAPPING = {"roleMapping": {"attribute": "groups", "values": {"acme-admins": "admin"}, "defaultRole": "member"}}


def admin_role(**kwargs):
    ROLE_CALLS.append(kwargs)
    return "admin"


def refusing_role(**kwargs):
    raise APIError(403, codes.FORBIDDEN, "No role for you")


@pytest.fixture(autouse=True)
def _clear_calls():
    ROLE_CALLS.clear()
    yield
    ROLE_CALLS.clear()


@pytest.fixture
def acme(db):
    return Organization.objects.create(name="Acme", slug="acme")


@pytest.fixture
def acme_sso(make_provider, acme):
    """Acme's SSO provider, its domain ``acme.com`` verified by DNS (its row says so)."""
    return make_provider("acme-sso", "https://idp.acme.com", {"clientId": "c"}, domain="acme.com",
                         organization_id=acme.pk)


def sign_in(api, corp, email="ada@acme.com", **claims):
    response = sign_in_with_corp(api, corp, email=email, **claims)
    assert response.status_code == 302 and urlsplit(response["Location"]).path == "/dashboard", response
    return users.find_by_email(email)


def memberships():
    return list(Member.objects.values_list("organization__slug", "user__email", "role"))


def test_a_verified_social_user_joins_the_organization_whose_provider_verified_their_domain(api, corp, acme_sso):
    user = sign_in(api, corp)
    member = Member.objects.get()
    assert (member.organization_id, member.user_id, member.role) == (acme_sso.organization_id, user.pk, "member")


def test_the_membership_is_managed_by_the_matched_provider(api, corp, acme_sso):
    sign_in(api, corp)
    assert Member.objects.get().managed_by == acme_sso.pk


def test_the_first_request_after_the_sign_in_sees_the_organization(api, corp, acme_sso):
    sign_in(api, corp)
    response = api.api_get("/organization/list")
    assert response.status_code == 200 and [org["slug"] for org in response.json()] == ["acme"]


def test_a_subdomain_address_joins_the_organization_of_its_parent_domain(api, corp, acme_sso):
    sign_in(api, corp, email="ada@eng.acme.com")
    assert memberships() == [("acme", "ada@eng.acme.com", "member")]


def test_the_most_specific_verified_domain_decides(api, corp, make_provider, acme_sso):
    eng = Organization.objects.create(name="Acme Engineering", slug="acme-eng")
    make_provider("eng-sso", "https://idp.eng.acme.com", {"clientId": "c"}, domain="eng.acme.com",
                  organization_id=eng.pk)
    sign_in(api, corp, email="ada@eng.acme.com")
    assert memberships() == [("acme-eng", "ada@eng.acme.com", "member")]


def test_a_provider_without_an_organization_is_not_a_match(api, corp, make_provider, acme_sso):
    make_provider("eng-sso", "https://idp.eng.acme.com", {"clientId": "c"}, domain="eng.acme.com")
    sign_in(api, corp, email="ada@eng.acme.com")
    assert memberships() == [("acme", "ada@eng.acme.com", "member")]


def test_two_organizations_for_the_same_domain_add_the_user_to_neither(api, corp, make_provider, acme_sso):
    rival = Organization.objects.create(name="Rival", slug="rival")
    make_provider("rival-sso", "https://idp.rival.com", {"clientId": "c"}, domain="acme.com",
                  organization_id=rival.pk)
    sign_in(api, corp)
    assert memberships() == []


def test_two_providers_of_one_organization_for_the_same_domain_add_the_user_once(api, corp, make_provider,
                                                                                acme_sso):
    make_provider("acme-saml", "https://idp.acme.com/saml", {"clientId": "c"}, domain="acme.com",
                  organization_id=acme_sso.organization_id)
    sign_in(api, corp)
    assert Member.objects.get().managed_by == acme_sso.pk  # the oldest provider, as routing picks


def test_an_unverified_email_joins_nothing(api, corp, acme_sso):
    user = sign_in(api, corp, email_verified=False)
    assert Session.objects.filter(user=user).exists()
    assert memberships() == []


def test_a_pending_domain_joins_nothing(api, corp, make_provider, acme):
    make_provider("acme-sso", "https://idp.acme.com", {"clientId": "c"}, domain="acme.com",
                  domain_verified=False, organization_id=acme.pk)
    sign_in(api, corp)
    assert memberships() == []


def test_the_provider_flag_without_a_verified_row_joins_nothing(api, corp, make_provider, acme):
    provider = make_provider("acme-sso", "https://idp.acme.com", {"clientId": "c"}, domain="acme.com",
                             domain_verified=False, organization_id=acme.pk)
    SsoProvider.objects.filter(pk=provider.pk).update(domain_verified=True)  # the flag alone vouches for nothing
    sign_in(api, corp)
    assert memberships() == []


def test_only_the_verified_domain_of_a_provider_joins(api, corp, make_provider, acme):
    provider = make_provider("acme-sso", "https://idp.acme.com", {"clientId": "c"}, domain="acme.com,acme.de",
                             domain_verified=False, organization_id=acme.pk)
    SsoProviderDomain.objects.filter(provider=provider, domain="acme.com").update(status=SsoProviderDomain.VERIFIED)
    sign_in(api, corp, email="ada@acme.de")
    sign_in(api, corp, email="bob@acme.com", sub="sub-bob")
    assert memberships() == [("acme", "bob@acme.com", "member")]


def test_nothing_happens_without_domain_verification(api, corp, configure_sso, acme_sso):
    configure_sso(domain_verification={"enabled": False})
    sign_in(api, corp)
    assert memberships() == []


def test_nothing_happens_with_organization_provisioning_disabled(api, corp, configure_sso, acme_sso):
    configure_sso(organization_provisioning={"disabled": True})
    sign_in(api, corp)
    assert memberships() == []


def test_nothing_happens_with_the_organization_feature_off(api, corp, configure_sso, acme_sso):
    configure_sso(organization={"enabled": False})
    sign_in(api, corp)
    assert memberships() == []


def test_an_existing_member_keeps_their_role(api, corp, acme_sso, make_user):
    user = make_user(email="ada@acme.com", email_verified=True)
    Member.objects.create(organization_id=acme_sso.organization_id, user=user, role="admin")
    sign_in(api, corp)
    assert memberships() == [("acme", "ada@acme.com", "admin")]


def test_default_role_setting_gives_the_role(api, corp, configure_sso, acme_sso):
    configure_sso(organization_provisioning={"default_role": "admin"})
    sign_in(api, corp)
    assert memberships() == [("acme", "ada@acme.com", "admin")]


def test_get_role_decides_the_role_without_the_social_providers_claims(api, corp, configure_sso, acme_sso):
    configure_sso(organization_provisioning={"get_role": "tests.sso.test_domain_membership.admin_role"})
    user = sign_in(api, corp, groups=["acme-admins"])
    assert memberships() == [("acme", "ada@acme.com", "admin")]
    [call] = ROLE_CALLS
    assert (call["user"], call["user_info"], call["token"], call["provider"]) == (user, {}, None, acme_sso)


def test_a_role_mapping_gives_its_default_role_whatever_groups_the_social_provider_claims(api, corp, acme_sso):
    SsoProvider.objects.filter(pk=acme_sso.pk).update(organization_provisioning=MAPPING)
    sign_in(api, corp, groups=["acme-admins"])
    assert memberships() == [("acme", "ada@acme.com", "member")]


def test_a_get_role_that_raises_leaves_no_session_and_no_membership(api, corp, configure_sso, acme_sso):
    configure_sso(organization_provisioning={"get_role": "tests.sso.test_domain_membership.refusing_role"})
    response = sign_in_with_corp(api, corp, email="ada@acme.com")
    assert response.status_code == 302 and query_of(response["Location"]) == {
        "error": "FORBIDDEN", "error_description": "No role for you"}
    assert not Session.objects.exists() and memberships() == []


def test_member_added_is_sent_once_the_sign_in_committed(api, corp, acme_sso, django_capture_on_commit_callbacks):
    added = []
    signals.member_added.connect(lambda member, **kwargs: added.append(member.role), weak=False,
                                 dispatch_uid="test-domain-member-added")
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            sign_in(api, corp)
        assert added == []
        for callback in callbacks:
            callback()
    finally:
        signals.member_added.disconnect(dispatch_uid="test-domain-member-added")
    assert added == ["member"]


def test_an_id_token_sign_in_joins_too(api, corp, acme_sso):
    token = corp.key.sign(corp.claims("n-1", email="ada@acme.com"))
    response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token, "nonce": "n-1"}})
    assert response.status_code == 200, response.content
    assert memberships() == [("acme", "ada@acme.com", "member")]

