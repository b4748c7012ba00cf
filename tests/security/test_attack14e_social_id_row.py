"""Attack 14e: an SSO row registered under an id that the deployment later gives a social provider (I1).

``/sso/register`` refuses the id of a configured social provider (sso/providers.py ``reserved_ids``) and
an id that still has accounts (``_check_provider_id``), because accounts are keyed by
``(provider_id, account_id)`` only and a row of that id would inherit them. Both checks run only at
registration. A generic OIDC social provider may have any id (``AUTHSERVICE["social_providers"]``, key
``"type": "oidc"``), so an ordinary user can register the row *before* the operator names the id, the
same ordering attack 14d used against ``default_sso``. Nothing afterwards tells the two apart: there is no
conflict rule like ``PROVIDER_ID_CONFLICT``/sso.E019 for social ids, so

- deleting the attacker's own row deletes every *social* account of that id (sso/row_deletion.py deletes
  ``Account.objects.filter(provider_id=...)``), other people's links and tokens included;
- the row keeps signing in beside the social provider, and an SSO subject equal to a victim's social
  subject is the victim's account: with domain verification off and ``trust_email_verified`` off (where
  the docs promise an existing user is never linked by an SSO provider), the attacker's IdP gets a session
  for the victim without asserting anything about their address.

Every flow is the real one: the social OAuth flow against tests/peers/social.py's stub OP, the SSO OIDC
flow against a loopback StubIdP, the row registered and deleted through the REST API.

The fix (sso/provider_claims.py) makes such a row unusable: every path that would use it, its management
endpoints included, answers 409 PROVIDER_ID_CONFLICT until the operator deletes it. The attacks are
unchanged; the status they meet is asserted as the refusal (before the fix both steps answered 200).
"""

import pytest

from authservice.models import Account
from sso.models import SsoProvider
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.peers.social import _stub_server, corp, sign_in_with_corp, stub  # noqa: F401 - fixtures
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import StubIdP

pytestmark = pytest.mark.django_db

VICTIM_SOCIAL_SUB = "victim-at-corp-social"


@pytest.fixture
def evil_idp():
    evil = StubIdP()
    yield evil
    evil.close()


def mallory(make_user):
    make_user(email="mallory@evil.com")
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": "mallory@evil.com", "password": PASSWORD}).status_code == 200
    return client


def register_before_the_social_provider(settings, attacker, evil_idp):
    """The deployment has not named ``corp`` yet: the attacker registers it, then the operator adds the
    generic OIDC social provider ``corp`` (the peers.social fixture's entry)."""
    configured = settings.AUTHSERVICE
    settings.AUTHSERVICE = {**configured, "social_providers": {},
                            "trusted_origins": [*configured.get("trusted_origins", []), evil_idp.url]}
    response = attacker.api_post("/sso/register", {
        "providerId": "corp", "issuer": evil_idp.issuer, "domain": "evil.com",
        "oidcConfig": evil_idp.oidc_config(skipDiscovery=True)})
    assert response.status_code == 200, response.content
    settings.AUTHSERVICE = {**configured, "trusted_origins": settings.AUTHSERVICE["trusted_origins"]}
    row = SsoProvider.objects.get(provider_id="corp")
    row.domain_verified = True  # evil.com is the attacker's own DNS
    row.save()


def victim_social_sign_in(corp):  # noqa: F811 - the fixture's value
    """The victim's social sign-in while the row exists: refused (attack pass 14f), since the row's IdP
    may have linked any subject to any user before the claim. Nothing is linked."""
    victim = ApiClient()
    response = sign_in_with_corp(victim, corp, sub=VICTIM_SOCIAL_SUB, email="ada@example.com")
    assert response.status_code == 302 and "error=PROVIDER_ID_CONFLICT" in response["Location"], response["Location"]
    assert not Account.objects.filter(provider_id="corp", account_id=VICTIM_SOCIAL_SUB).exists()
    assert victim.api_get("/get-session").json() is None


def victims_earlier_social_account(make_user):
    """A social account of the victim that predates the row (state no API path makes any more)."""
    victim = make_user(email="ada@example.com", email_verified=True)
    return Account.objects.create(user=victim, provider_id="corp", account_id=VICTIM_SOCIAL_SUB)


def test_deleting_your_own_row_deletes_other_peoples_social_accounts(settings, corp, make_user, evil_idp):  # noqa: F811
    attacker = mallory(make_user)
    register_before_the_social_provider(settings, attacker, evil_idp)
    victim_social_sign_in(corp)
    victim_account = victims_earlier_social_account(make_user)
    response = attacker.api_post("/sso/delete-provider", {"providerId": "corp"})
    assert response.status_code == 409 and error_of(response)["code"] == "PROVIDER_ID_CONFLICT", response.content
    assert Account.objects.filter(pk=victim_account.pk).exists()


def test_a_row_with_a_later_social_id_signs_into_the_victims_social_account(
        settings, corp, make_user, evil_idp, configure_sso):  # noqa: F811
    configure_sso(domain_verification={"enabled": False}, account_linking={"trust_email_verified": False})
    attacker = mallory(make_user)
    register_before_the_social_provider(settings, attacker, evil_idp)
    victim_social_sign_in(corp)
    # The attacker's browser signs in through their own row; their IdP names the victim's social subject
    # (visible to anyone the victim shares a workspace with) and an address of the attacker's.
    browser = ApiClient()
    started = browser.api_post("/sign-in/sso", {"providerId": "corp", "callbackURL": "/dashboard",
                                                "errorCallbackURL": "/oops"})
    # The row is refused before any IdP is contacted (a sign-in started before the social provider was
    # configured meets the conflict at the callback: tests/sso/test_provider_id_claims.py).
    assert started.status_code == 409 and error_of(started)["code"] == "PROVIDER_ID_CONFLICT", started.content
    assert not evil_idp.token_requests
    session = browser.api_get("/get-session").json()
    assert (session or {}).get("user", {}).get("email") != "ada@example.com"
