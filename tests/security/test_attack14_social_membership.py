"""Membership by e-mail domain after a social sign-in, attack pass 14: get into an organization you do
not belong to (sso.md §8, last paragraph; sso/domain_membership.py; I1).

The attacker holds ordinary accounts, social accounts whose claims they shape (within what a
configured social provider will sign), and SSO providers of their own for domains they control. A
membership is a privilege: each test asserts that the attacker does *not* end up in Acme, whose SSO
provider verified ``acme.com`` by DNS. Every test drives the real social OAuth flow against the stub
OpenID provider of tests/peers/social.py; providers, domain rows, users and members are real rows.
"""

from urllib.parse import urlsplit

import pytest

from authservice import signals as core_signals
from authservice import users
from authservice.errors import APIError, codes
from authservice.models import Account, Session
from sso.models import Member, Organization, SsoProvider, SsoProviderDomain
from tests.conftest import PASSWORD, ApiClient
from tests.peers.social import _stub_server, corp, query_of, sign_in_with_corp, stub  # noqa: F401 - fixtures
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, sign_in  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import make_provider  # noqa: F401 - fixture
from tests.two_factor_support import enrol

pytestmark = pytest.mark.django_db


def broken_role(**kwargs):
    raise RuntimeError("a bug in the deployment's get_role")


@pytest.fixture
def acme(db):
    return Organization.objects.create(name="Acme", slug="acme")


@pytest.fixture
def acme_sso(make_provider, acme):
    """Acme's provider, ``acme.com`` verified (its row says so)."""
    return make_provider("acme-sso", "https://idp.acme.com", {"clientId": "c"}, domain="acme.com",
                         organization_id=acme.pk)


def social(api, corp, email, **claims):
    """The social sign-in; the callback's redirect (success or error)."""
    response = sign_in_with_corp(api, corp, email=email, **claims)
    assert response.status_code == 302, response.content
    return response


def signed_in(response):
    return urlsplit(response["Location"]).path == "/dashboard" and "error" not in query_of(response["Location"])


def acme_members():
    return list(Member.objects.filter(organization__slug="acme").values_list("user__email", "role"))


# --- the e-mail must be verified, by the provider's own boolean ------------------------------------------
@pytest.mark.parametrize("claim", ["false", "False", "TRUE", 1, "1", "yes", None, [True], {"value": True}])
def test_an_email_verified_claim_that_is_not_the_boolean_true_joins_nothing(api, corp, acme_sso, claim):
    response = social(api, corp, "mallory@acme.com", email_verified=claim)
    assert signed_in(response)
    assert acme_members() == []


def test_an_unverified_stored_address_joins_nothing_whatever_the_idp_says_of_another(api, corp, acme_sso,
                                                                                    make_user):
    """A user whose own address at acme.com is unproven links a social account; the IdP vouches for
    another address (the attacker's own): the stored address stays unproven."""
    user = make_user(email="mallory@acme.com")
    Account.objects.create(user=user, provider_id="corp", account_id="sub-mallory")
    response = social(api, corp, "mallory@gmail.com", sub="sub-mallory")
    assert signed_in(response) and not users.is_email_verified(users.find_by_email("mallory@acme.com"))
    assert acme_members() == []


def test_a_verified_idp_address_at_acme_does_not_count_for_a_linked_user_stored_elsewhere(api, corp, acme_sso,
                                                                                        make_user):
    """The account is linked to a user whose stored, verified address is the attacker's own domain;
    the IdP now asserts a verified acme.com address. Membership reads the stored address only."""
    user = make_user(email="mallory@evil.test", email_verified=True)
    Account.objects.create(user=user, provider_id="corp", account_id="sub-mallory")
    assert signed_in(social(api, corp, "mallory@acme.com", sub="sub-mallory"))
    assert acme_members() == [] and users.email_of(users.find_by_pk(user.pk)) == "mallory@evil.test"


def test_an_address_moved_to_acme_without_proof_joins_nothing(api, corp, acme_sso, make_user, configure):
    """change-email flow (a): an unverified address moves at once to acme.com, unproven; the user then
    signs in with their linked social account."""
    configure(change_email={"enabled": True, "update_email_without_verification": True})
    user = make_user(email="mallory@evil.test")
    Account.objects.create(user=user, provider_id="corp", account_id="sub-mallory")
    browser = ApiClient()
    assert browser.api_post("/sign-in/email", {"email": "mallory@evil.test", "password": PASSWORD}).status_code == 200
    assert browser.api_post("/change-email", {"newEmail": "mallory@acme.com"}).status_code == 200
    assert users.email_of(users.find_by_pk(user.pk)) == "mallory@acme.com"
    assert signed_in(social(api, corp, "mallory@evil.test", sub="sub-mallory"))
    assert acme_members() == []


# --- the domain must be one Acme verified, matched exactly or as a parent -------------------------------
@pytest.mark.parametrize("email", [
    "mallory@evil-acme.com", "mallory@acme.com.evil.net", "mallory@acmecom", "mallory@acme.co",
    "mallory@xn--acme-xxa.com", "mallory@\u0430cme.com", "mallory@acme.comm", "mallory@notacme.com",
    "mallory@acme\u2024com", "acme.com@evil.net", "mallory@acme.com@evil.net",
])
def test_a_look_alike_domain_joins_nothing(api, corp, acme_sso, email):
    social(api, corp, email)
    assert acme_members() == []


def test_a_subdomain_provider_does_not_cover_its_parent(api, corp, make_provider, acme):
    make_provider("eng-sso", "https://idp.eng.acme.com", {"clientId": "c"}, domain="eng.acme.com",
                  organization_id=acme.pk)
    social(api, corp, "mallory@acme.com")
    assert acme_members() == []


@pytest.mark.parametrize("status", [SsoProviderDomain.PENDING, SsoProviderDomain.FAILED])
def test_a_row_that_is_not_verified_joins_nothing_while_the_provider_flag_says_verified(api, corp, make_provider,
                                                                                       acme, status):
    provider = make_provider("acme-sso", "https://idp.acme.com", {"clientId": "c"}, domain="acme.com",
                             organization_id=acme.pk)
    SsoProviderDomain.objects.filter(provider=provider).update(status=status)
    SsoProvider.objects.filter(pk=provider.pk).update(domain_verified=True)
    social(api, corp, "mallory@acme.com")
    assert acme_members() == []


def test_a_provider_trusted_for_any_address_still_needs_a_verified_row(api, corp, make_provider, acme,
                                                                       configure_sso):
    configure_sso(trust_any_email_domain=["acme-sso"])
    make_provider("acme-sso", "https://idp.acme.com", {"clientId": "c"}, domain="acme.com", domain_verified=False,
                  organization_id=acme.pk)
    social(api, corp, "mallory@acme.com")
    assert acme_members() == []


def test_the_attackers_own_verified_provider_for_acme_com_makes_the_match_ambiguous_not_theirs(
        api, corp, make_provider, acme_sso):
    """Two organizations verified for acme.com (the admin marked both): the attacker's org gets nobody."""
    evil = Organization.objects.create(name="Evil", slug="evil")
    make_provider("evil-sso", "https://idp.evil.test", {"clientId": "c"}, domain="acme.com", organization_id=evil.pk)
    social(api, corp, "ada@acme.com")
    assert Member.objects.count() == 0


def test_a_provider_whose_organization_is_gone_joins_nothing_and_signs_in(api, corp, make_provider):
    make_provider("acme-sso", "https://idp.acme.com", {"clientId": "c"}, domain="acme.com",
                  organization_id="deleted-organization")
    assert signed_in(social(api, corp, "ada@acme.com"))
    assert Member.objects.count() == 0


# --- an existing membership is never changed ------------------------------------------------------------
@pytest.mark.parametrize("role", ["owner", "admin", "member", "owner,admin"])
def test_an_existing_membership_keeps_its_role_and_manager(api, corp, acme_sso, make_user, configure_sso, role):
    configure_sso(organization_provisioning={"default_role": "admin" if role != "admin" else "member"})
    user = make_user(email="ada@acme.com", email_verified=True)
    Member.objects.create(organization_id=acme_sso.organization_id, user=user, role=role)
    social(api, corp, "ada@acme.com")
    member = Member.objects.get()
    assert (member.role, member.managed_by) == (role, "")


def test_a_default_role_of_owner_never_makes_an_owner(api, corp, acme_sso, configure_sso):
    configure_sso(organization_provisioning={"default_role": "owner"})
    social(api, corp, "ada@acme.com")
    assert acme_members() == [("ada@acme.com", "member")]


def test_groups_claimed_by_the_social_provider_never_promote(api, corp, acme_sso):
    SsoProvider.objects.filter(pk=acme_sso.pk).update(organization_provisioning={
        "roleMapping": {"attribute": "groups", "values": {"admins": "admin"}}})
    social(api, corp, "ada@acme.com", groups=["admins"])
    assert acme_members() == [("ada@acme.com", "member")]


# --- no session, no membership: the gates before the hook, and failures inside it ------------------------
def test_an_inactive_user_joins_nothing(api, corp, acme_sso, make_user):
    make_user(email="ada@acme.com", email_verified=True, is_active=False)
    response = social(api, corp, "ada@acme.com")
    assert not signed_in(response)
    assert acme_members() == []


def test_a_user_with_a_second_factor_joins_nothing_before_giving_it(api, corp, acme_sso, make_user):
    make_user(email="ada@acme.com", email_verified=True)
    browser = ApiClient()
    assert browser.api_post("/sign-in/email", {"email": "ada@acme.com", "password": PASSWORD}).status_code == 200
    enrol(browser)
    response = social(api, corp, "ada@acme.com")
    assert query_of(response["Location"]).get("twoFactorRedirect") == "true"
    assert acme_members() == []


def test_a_get_role_hook_that_crashes_redirects_with_an_error_and_leaves_nothing(api, corp, acme_sso,
                                                                                 configure_sso):
    configure_sso(organization_provisioning={"get_role": f"{__name__}.broken_role"})
    response = social(api, corp, "ada@acme.com")
    assert query_of(response["Location"]).get("error")
    assert not Session.objects.exists() and Member.objects.count() == 0


def test_a_get_role_hook_that_crashes_on_an_id_token_sign_in_leaves_nothing(api, corp, acme_sso, configure_sso):
    configure_sso(organization_provisioning={"get_role": f"{__name__}.broken_role"})
    token = corp.key.sign(corp.claims("n-1", email="ada@acme.com"))
    try:
        api.raise_request_exception = False
        response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token, "nonce": "n-1"}})
    finally:
        api.raise_request_exception = True
    assert response.status_code != 200  # a 500: the deployment's hook is broken, not the request
    assert not Session.objects.exists() and Member.objects.count() == 0


def test_a_later_receiver_that_refuses_rolls_the_membership_back(api, corp, acme_sso):
    def refuse(**kwargs):
        raise APIError(403, codes.FORBIDDEN, "refused by the site")

    core_signals.social_sign_in_committing.connect(refuse, weak=False, dispatch_uid="test-refuse-after-sso")
    try:
        response = social(api, corp, "ada@acme.com")
    finally:
        core_signals.social_sign_in_committing.disconnect(dispatch_uid="test-refuse-after-sso")
    assert query_of(response["Location"]).get("error") == "FORBIDDEN"
    assert not Session.objects.exists() and Member.objects.count() == 0


@pytest.mark.parametrize("claim", ["false", 1])
def test_an_id_token_whose_email_verified_is_not_the_boolean_true_joins_nothing(api, corp, acme_sso, claim):
    token = corp.key.sign(corp.claims("n-1", email="mallory@acme.com", email_verified=claim))
    response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token, "nonce": "n-1"}})
    assert response.status_code == 200, response.content
    assert acme_members() == []


@pytest.mark.xfail(strict=True, reason="spec decision pending (sso.md §8): a member an admin removed is "
                   "added again by their next social sign-in while their stored address stays verified")
def test_a_member_the_organization_removed_is_not_added_back_by_their_next_social_sign_in(api, corp, acme_sso):
    social(api, corp, "mallory@acme.com")
    Member.objects.filter(user__email="mallory@acme.com").delete()  # what /organization/remove-member does
    social(api, corp, "mallory@acme.com")
    assert acme_members() == []


def test_a_squatted_provider_id_that_later_becomes_a_default_does_not_capture_acme(api, corp, configure_sso,
                                                                                     sign_in):
    mallory = sign_in("mallory@evil.test")
    evil = mallory.api_post("/organization/create", {"name": "Evil", "slug": "evil"}).json()["id"]
    assert mallory.api_post("/sso/register", {**skip_discovery_body("okta", domain="evil.test"),
                                              "organizationId": evil}).status_code == 200
    configure_sso(default_sso=[{"providerId": "okta"}])  # the deployment later sets up its own "okta"
    mallory.api_post("/sso/update-provider", {"providerId": "okta", "domain": "acme.com"})
    sign_in_with_corp(api, corp, email="ada@acme.com")
    assert not Member.objects.filter(organization_id=evil, user__email="ada@acme.com").exists()
