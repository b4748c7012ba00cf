"""Attack 14f: the core's social flow uses the accounts linked through a row whose id it claims (I1).

The conflict rule (sso/provider_claims.py) refuses every SSO path of a row whose ``provider_id`` the
deployment later gives a social provider. But accounts are keyed by ``(provider_id, account_id)`` only,
and the *social* provider of that id is not refused while the row exists (unlike a default_sso item,
which answers 409 too): its flow (authservice/flows/external_identity.py ``_user_for``) picks up every
account the row's IdP created before the claim.

Mallory registers ``corp`` before the operator names the generic OIDC social provider ``corp``, verifies
her own domain, and signs in once through her own IdP naming the victim's (future) social subject for
an address of hers. After the claim, the victim's social sign-in with that subject lands in Mallory's
user: a session for a user the social provider never named, from a link an untrusted IdP made
(pre-hijacking: whatever the victim stores, Mallory reads).
"""

import pytest

from authservice.models import Account
from sso.models import SsoProvider
from tests.conftest import PASSWORD, ApiClient
from tests.peers.social import _stub_server, corp, sign_in_with_corp, stub  # noqa: F401 - fixtures
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import StubIdP, authorize_params

pytestmark = pytest.mark.django_db

VICTIM_SOCIAL_SUB = "victim-at-corp-social"


@pytest.fixture
def evil_idp():
    evil = StubIdP()
    yield evil
    evil.close()


def test_a_link_made_by_the_row_before_the_claim_signs_the_social_victim_into_mallorys_user(
        settings, corp, make_user, evil_idp):  # noqa: F811
    make_user(email="mallory@evil.com")
    attacker = ApiClient()
    assert attacker.api_post("/sign-in/email", {"email": "mallory@evil.com", "password": PASSWORD}).status_code == 200
    configured = settings.AUTHSERVICE
    settings.AUTHSERVICE = {**configured, "social_providers": {},
                            "trusted_origins": [*configured.get("trusted_origins", []), evil_idp.url]}
    response = attacker.api_post("/sso/register", {
        "providerId": "corp", "issuer": evil_idp.issuer, "domain": "evil.com",
        "oidcConfig": evil_idp.oidc_config(skipDiscovery=True)})
    assert response.status_code == 200, response.content
    row = SsoProvider.objects.get(provider_id="corp")
    row.domain_verified = True  # evil.com is Mallory's own DNS
    row.save()
    # Before the claim: Mallory's IdP names the victim's social subject, for an address of Mallory's.
    browser = ApiClient()
    started = browser.api_post("/sign-in/sso", {"providerId": "corp", "callbackURL": "/dashboard",
                                                "errorCallbackURL": "/oops"})
    assert started.status_code == 200, started.content
    params = authorize_params(started.json()["url"])
    evil_idp.id_token = evil_idp.sign(evil_idp.claims(params["nonce"], sub=VICTIM_SOCIAL_SUB,
                                                      email="mallory2@evil.com"))
    done = browser.get("/api/auth/sso/callback/corp", {"code": "c", "state": params["state"]})
    assert done.status_code == 302 and "error" not in done["Location"], done["Location"]
    planted = Account.objects.get(provider_id="corp", account_id=VICTIM_SOCIAL_SUB)
    assert planted.user.email == "mallory2@evil.com"
    # The operator names the social provider corp (the fixture's entry); the row is now in conflict.
    settings.AUTHSERVICE = {**configured, "trusted_origins": settings.AUTHSERVICE["trusted_origins"]}
    assert browser.api_post("/sign-in/sso", {"providerId": "corp", "callbackURL": "/d"}).status_code == 409
    # The victim signs in with the social provider, which names their subject and address.
    victim = ApiClient()
    response = sign_in_with_corp(victim, corp, sub=VICTIM_SOCIAL_SUB, email="ada@example.com")
    session = victim.api_get("/get-session").json() or {}
    assert (session.get("user") or {}).get("email") != "mallory2@evil.com", (
        "the social sign-in used the conflicting row's link: victim is in Mallory's user", response["Location"])
