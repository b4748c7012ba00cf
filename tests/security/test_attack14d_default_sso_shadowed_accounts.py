"""Attack 14d: the accounts and SCIM connection of a row that a settings provider shadows (I1).

docs/sso-options.md: a settings provider "wins over a database row with the same provider_id (the row
is ignored by sign-in and routing)". Such a row exists whenever someone registered the id before the
deployment named it in ``default_sso`` (the scenario commit dde5cd4 defends against). The row is
ignored, but what it *made* is not: SSO accounts are keyed by ``(provider_id, account_id)`` only
(authservice/flows/external_identity.py ``_user_for``), and SCIM adoption trusts "an SSO account of the
same provider" by ``provider_id`` (sso/scim/users.py ``_adoptable``). So the settings provider's
statements are mapped through links the attacker's IdP made, and the attacker's pre-existing SCIM token
(whose connection belongs to the shadowed row and keeps working) reaches the settings provider's users.

Every sign-in here is the real callback flow against loopback stub IdPs (signed ID tokens); the
attacker registers the row and issues its SCIM token through the real endpoints *before* the operator
adds the settings item.

The fix (sso/default_providers.py, sso/row_deletion.py) changes the expected outcome on purpose: while
the row exists the settings provider fails closed (409 PROVIDER_ID_CONFLICT) and the row's SCIM token is
refused; the operator resolves it by deleting the row, which deletes the accounts linked through it.
So each attack below first meets the conflict, then the operator deletes the row (``QuerySet.delete()``,
not the API: every path must take the accounts along), then the victim's sign-in is the attack's target.
The attacks themselves are unchanged.
"""

from urllib.parse import parse_qs, urlsplit

import pytest

from authservice import users
from authservice.models import Account, Session
from sso.models import SsoProvider
from tests.conftest import PASSWORD, ApiClient
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import StubIdP, authorize_params
from tests.sso.scim.conftest import ScimClient, user_body

pytestmark = pytest.mark.django_db

VICTIM_SUB = "00u-victim-at-corp"  # the victim's subject at the company's IdP (visible to colleagues)


@pytest.fixture
def idps(stub_idp, configure):
    """``honest`` (the company's IdP, later the settings provider) and ``evil`` (the attacker's)."""
    evil = StubIdP()
    configure(trusted_origins=[stub_idp.url, evil.url])
    yield stub_idp, evil
    evil.close()


def settings_item(honest):
    return {"providerId": "corp", "domain": "corp.com", "issuer": honest.issuer, "oidcConfig": honest.oidc_config()}


def attacker_session(make_user):
    make_user(email="mallory@evil.com")
    attacker = ApiClient()
    assert attacker.api_post("/sign-in/email", {"email": "mallory@evil.com", "password": PASSWORD}).status_code == 200
    return attacker


def register_corp_row(attacker, evil):
    """The attacker registers ``corp`` before the deployment names it, and proves evil.com (their DNS)."""
    response = attacker.api_post("/sso/register", {
        "providerId": "corp", "issuer": evil.issuer, "domain": "evil.com",
        "oidcConfig": evil.oidc_config(skipDiscovery=True)})
    assert response.status_code == 200, response.content
    row = SsoProvider.objects.get(provider_id="corp")
    row.domain_verified = True
    row.save()
    return row


def sso_sign_in(browser, idp, **claims):
    """/sign-in/sso by providerId ``corp`` and the callback with ``idp``'s signed ID token."""
    started = browser.api_post("/sign-in/sso", {"providerId": "corp", "callbackURL": "/dashboard",
                                                "errorCallbackURL": "/oops"})
    assert started.status_code == 200, started.content
    params = authorize_params(started.json()["url"])
    idp.id_token = idp.sign(idp.claims(params["nonce"], **claims))
    response = browser.get("/api/auth/sso/callback/corp", {"code": "c", "state": params["state"]})
    assert response.status_code == 302
    return response


def operator_resolves_the_conflict(browser):
    """The settings provider is refused while the row exists; the operator deletes the row (not the API)."""
    refused = browser.api_post("/sign-in/sso", {"providerId": "corp", "callbackURL": "/dashboard"})
    assert refused.status_code == 409 and refused.json()["code"] == "PROVIDER_ID_CONFLICT", refused.content
    SsoProvider.objects.filter(provider_id="corp").delete()


def error_of_redirect(response):
    return parse_qs(urlsplit(response["Location"]).query).get("error", [None])[-1]


def session_email(browser):
    body = browser.api_get("/get-session").json()
    return (body or {}).get("user", {}).get("email")


def test_a_shadowed_rows_account_does_not_capture_the_settings_providers_subject(
        api, idps, make_user, configure_sso):
    honest, evil = idps
    attacker = attacker_session(make_user)
    register_corp_row(attacker, evil)
    # Through their own row, the attacker links the victim's subject at the company to their own user.
    sso_sign_in(attacker, evil, sub=VICTIM_SUB, email="mallory-sso@evil.com")
    assert Account.objects.filter(provider_id="corp", account_id=VICTIM_SUB).exists()
    configure_sso(default_sso=[settings_item(honest)])  # the operator names "corp" later
    operator_resolves_the_conflict(api)
    # The victim signs in at the company's IdP through the settings provider.
    response = sso_sign_in(api, honest, sub=VICTIM_SUB, email="ada@corp.com")
    assert error_of_redirect(response) is None, response["Location"]
    assert session_email(api) == "ada@corp.com"


def test_a_pre_hijack_through_the_shadowed_row_does_not_survive_the_victims_sign_in(
        api, idps, make_user, configure_sso):
    honest, evil = idps
    configure_sso(domain_verification={"enabled": False}, account_linking={"trust_email_verified": False})
    attacker = attacker_session(make_user)
    register_corp_row(attacker, evil)
    # Before the victim ever signs in, the attacker's IdP makes ada@corp.com with the victim's subject.
    mallory_browser = ApiClient()
    sso_sign_in(mallory_browser, evil, sub=VICTIM_SUB, email="ada@corp.com", email_verified=False)
    assert session_email(mallory_browser) == "ada@corp.com"
    configure_sso(default_sso=[settings_item(honest)])
    operator_resolves_the_conflict(api)
    response = sso_sign_in(api, honest, sub=VICTIM_SUB, email="ada@corp.com")
    # The victim's sign-in must not land in the account the attacker still has a session in. The deleted
    # row took the pre-hijack link along, so the victim meets an unproven account of their address, which
    # the core never merges into (as test_review2_prehijack_defaults.py); before the fix the link made
    # the settings provider sign the victim straight into it. (Changed on purpose: the attack asserted
    # a successful sign-in and a dead attacker session.)
    assert error_of_redirect(response) == "account not linked", response["Location"]
    assert session_email(api) is None
    assert not Account.objects.filter(provider_id="corp").exists()


def test_a_shadowed_rows_scim_token_cannot_take_over_the_settings_providers_users(
        api, idps, make_user, configure_sso):
    honest, evil = idps
    configure_sso(domain_verification={"enabled": False}, scim={"enabled": True})
    attacker = attacker_session(make_user)
    register_corp_row(attacker, evil)
    issued = attacker.api_post("/scim/generate-token", {"providerId": "corp"})
    assert issued.status_code == 201, issued.content
    scim = ScimClient(issued.json()["scimToken"])
    configure_sso(default_sso=[settings_item(honest)])
    # While the row exists its connection is dead; then the operator deletes the row.
    assert scim.get_("/Users", {"filter": 'userName eq "ada@corp.com"'}).status_code == 401
    operator_resolves_the_conflict(api)
    # The victim signs in through the settings provider: user ada@corp.com, account (corp, VICTIM_SUB).
    response = sso_sign_in(api, honest, sub=VICTIM_SUB, email="ada@corp.com")
    assert error_of_redirect(response) is None, response["Location"]
    victim = users.find_by_email("ada@corp.com")
    # The attacker's directory "provisions" the victim: adopted, moved to the attacker's address, turned off.
    scim.scim("POST", "/Users", user_body("ada@corp.com", active=False,
                                          emails=[{"value": "ada@corp.com", "type": "work", "primary": True}]))
    found = scim.get_("/Users", {"filter": 'userName eq "ada@corp.com"'}).json()
    victim.refresh_from_db()
    assert victim.is_active and users.email_of(victim) == "ada@corp.com"
    assert found.get("totalResults", 0) == 0, "the attacker's directory manages the settings provider's user"
    assert Session.objects.filter(user=victim).exists()
