"""An organization admin locks the organization's owner out through SCIM (attack 14, SCIM roles).

The rule for minting a SCIM token is "the provider's owner or an owner/admin of its organization"
(sso/endpoints/scim.py). SCIM is careful with owners' *memberships* (membership.sync skips them: "an
IdP's directory must not take over the organization"), but not with their *accounts*: ``_adoptable``
adopts any user who already signs in through the provider, the owner included, and ``active: false``
(or DELETE) then sets ``is_active`` false and deletes every session. So an admin, who by the
organization's own rules cannot remove or demote the owner, mints a token and, with two requests,
signs the owner out everywhere and keeps them out (password, SSO, social, passkey all refuse an
inactive user): a lock-out of the one role above them, outside any IdP. I1: a user is locked out by
someone who is not an authority over them.

Fix at the mechanism: the directory's reach stops where its membership rule does: a user who owns the
provider's organization is neither adopted nor deactivated through SCIM (409/403), or only an owner
may mint the token (an admin cannot mint a credential stronger than their role).
"""

import pytest

from authservice import users
from authservice.models import Account, Session
from sso.models import Member
from tests.conftest import PASSWORD, ApiClient
from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def test_an_admin_cannot_deactivate_the_organizations_owner_through_scim(provider, make_user):
    org = provider.organization_id
    owner = make_user(email="founder@acme.com", password=None)  # signs in through the company's SSO
    Account.objects.create(user=owner, provider_id=provider.provider_id, account_id="founder-sub")
    Member.objects.filter(organization_id=org).delete()
    Member.objects.create(organization_id=org, user=owner, role=Member.OWNER)
    Session.objects.create(user=owner, token="founder-session", expires_at="2999-01-01T00:00:00Z")

    admin = make_user(email="it-admin@example.net")
    Member.objects.create(organization_id=org, user=admin, role=Member.ADMIN)
    browser = ApiClient()
    assert browser.api_post("/sign-in/email", {"email": admin.email, "password": PASSWORD}).status_code == 200
    response = browser.api_post("/scim/generate-token", {"providerId": provider.provider_id})
    assert response.status_code == 201, response.content
    scim = ScimClient(response.json()["scimToken"])

    scim.scim("POST", "/Users", user_body("founder@acme.com", active=False))

    owner.refresh_from_db()
    assert owner.is_active, "an organization admin deactivated the organization's owner"
    assert Session.objects.filter(user=owner).exists(), "an organization admin signed the owner out"
    assert users.find_by_email("founder@acme.com").pk == owner.pk
