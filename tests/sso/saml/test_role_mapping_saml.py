"""Roles from a SAML attribute, against a real IdP (npm samlify) (issue 14 §4, docs/sso-roles.md).

A multi-valued ``memberOf`` attribute decides the role on the first sign-in and on every later one.
"""

import pytest

from sso.models import Member
from tests.sso.saml.conftest import post_acs, session_user, user_for

pytestmark = pytest.mark.django_db

MAPPING = {"roleMapping": {"attribute": "memberOf", "values": {"cn=it-admins": "admin"}, "defaultRole": "member"}}


@pytest.fixture
def provider(saml_provider, saml_owner):
    organization = saml_owner.api_post("/organization/create", {"name": "Acme", "slug": "acme"}).json()
    provider = saml_provider("acme-roles", organization_id=organization["id"])
    response = saml_owner.api_post("/sso/update-provider", {"providerId": "acme-roles",
                                                            "organizationProvisioning": MAPPING})
    assert response.status_code == 200, response.content
    provider.organization_id = organization["id"]
    return provider


def sign_in(provider, browser, groups):
    user = user_for()
    user["attributes"]["memberOf"] = groups
    form = provider.idp_response(browser, user)
    response = post_acs(browser, provider.provider_id, form.saml_response, form.relay_state)
    assert response.status_code == 302, response.content
    assert session_user(browser)["email"] == "ada@acme.com"


def role(provider):
    return Member.objects.get(organization_id=provider.organization_id, user__email="ada@acme.com").role


def test_a_mapped_saml_attribute_value_gives_its_role(provider, browser):
    sign_in(provider, browser, ["cn=staff", "cn=it-admins"])
    assert role(provider) == "admin"


def test_the_role_follows_the_attribute_on_every_sign_in(provider, browser):
    from tests.conftest import ApiClient

    sign_in(provider, browser, ["cn=it-admins"])
    sign_in(provider, ApiClient(), ["cn=staff"])
    assert role(provider) == "member"
