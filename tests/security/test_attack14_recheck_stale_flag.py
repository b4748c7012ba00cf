"""Attack 14, domains: the re-check (``manage.py sso_verify_domain --all``) verifies a domain the
attacker added while it ran (I1).

``domain_recheck._recheck_verified``, with ``unverify_on_missing_record`` on, handles a vanished record
of a provider whose ``domain_verified`` flag is set by first marking *every other row* of the provider
verified ("the flag stood for every domain"). The flag it reads is the one loaded when
``recheck_all`` fetched the provider, before any lookup ran: minutes earlier on a real run (one lookup
per domain of every provider, up to 5 s each), and in any case before the lookup of the attacker's own
domain, whose nameserver the attacker runs and can make answer as late as it likes.

The attack: the attacker's provider ``evil`` is verified for ``evil.test`` (their own domain; flag
set). While the re-check waits for ``_auth-token-evil.evil.test``, the attacker adds the victim's
``corp.test`` (already verified by the victim's provider) through ``update-provider``: a new row,
pending, the flag recomputed to False. Their nameserver then answers NXDOMAIN. The re-check, on the
stale flag, marks the new ``corp.test`` row verified (no token, no record, no DOMAIN_CLAIMED check),
then fails ``evil.test``, which the attacker re-verifies at will. ``evil`` now vouches for every
``corp.test`` address: it signs in, links and creates any user of the victim's domain.

Fix at the mechanism: never derive a row's state from a flag read outside the transaction. The flag is
a summary of the rows; un-verifying one row must touch that row only (drop the "mark the others"
step, or re-read the provider row ``select_for_update`` and its rows in the same transaction and
only ever promote rows that were verified by their own check).
"""

import dns.resolver
import pytest

from authservice.models import Account, Session
from sso import domain_recheck, domains
from sso.models import SsoProvider, SsoProviderDomain
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, dns_server, sign_in  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import authorize_params

pytestmark = pytest.mark.django_db

ATTACKER_RECORD = "_auth-token-evil.evil.test"


def register(client, provider_id, domain, **changes):
    response = client.api_post("/sso/register", skip_discovery_body(provider_id=provider_id, domain=domain, **changes))
    assert response.status_code == 200, response.content
    return {item["domain"]: item["domainVerificationToken"] for item in response.json()["domains"]}


def verify(client, dns, provider_id, domain, token):
    dns.txt(f"_auth-token-{provider_id}.{domain}", token)
    response = client.api_post("/sso/verify-domain", {"providerId": provider_id})
    assert response.status_code == 204, response.content


class AttackerTimedResolver:
    """The real resolver (the loopback DNS server), except that the attacker's nameserver holds the
    answer for their own record while the attacker sends one more request, then answers NXDOMAIN."""

    def __init__(self, real, during_lookup):
        self.real, self.during_lookup, self.fired = real, during_lookup, False

    def resolve(self, name, *args, **kwargs):
        if str(name).rstrip(".").lower() == ATTACKER_RECORD and not self.fired:
            self.fired = True
            self.during_lookup()
            raise dns.resolver.NXDOMAIN()
        return self.real.resolve(name, *args, **kwargs)


@pytest.fixture
def victim(sign_in, dns_server):
    client = sign_in("admin@corp.test")
    verify(client, dns_server, "corp", "corp.test", register(client, "corp", "corp.test")["corp.test"])
    return client


@pytest.fixture
def attacker(sign_in, dns_server, configure_sso):
    configure_sso(domain_verification={"unverify_on_missing_record": True})
    client = sign_in("mallory@evil.test")
    verify(client, dns_server, "evil", "evil.test", register(client, "evil", "evil.test")["evil.test"])
    assert SsoProvider.objects.get(provider_id="evil").domain_verified is True
    return client


def run_recheck_while_attacker_adds(client, domain_list):
    def add_domain():
        response = client.api_post("/sso/update-provider", {"providerId": "evil", "domain": domain_list})
        assert response.status_code == 200, response.content

    resolver = AttackerTimedResolver(domains.resolver(), add_domain)
    outcomes = list(domain_recheck.recheck_all(using=resolver))
    assert resolver.fired
    return outcomes


def test_a_domain_added_during_the_recheck_is_not_verified_by_the_stale_flag(victim, attacker):
    run_recheck_while_attacker_adds(attacker, ["evil.test", "corp.test"])
    row = SsoProviderDomain.objects.get(provider__provider_id="evil", domain="corp.test")
    assert row.status != SsoProviderDomain.VERIFIED
    assert "corp.test" not in SsoProvider.objects.get(provider_id="evil").trusted_domains()


def test_the_recheck_race_does_not_let_the_attackers_idp_sign_in_as_a_victim_user(
        victim, attacker, dns_server, stub_idp, make_user, api):
    """End to end: after the race and a re-verification of their own domain, the attacker's IdP
    signs in as the victim company's existing user (I1, account takeover)."""
    ceo = make_user(email="ceo@corp.test", email_verified=True)
    # The attacker's provider talks to their own OP (the stub).
    update = attacker.api_post("/sso/update-provider", {"providerId": "evil", "oidcConfig": {
        key: value for key, value in stub_idp.oidc_config().items() if key not in ("issuer",)},
        "issuer": stub_idp.issuer})
    assert update.status_code == 200, update.content
    run_recheck_while_attacker_adds(attacker, ["evil.test", "corp.test"])
    # evil.test is failed now; the attacker asks for a new token and publishes it.
    token = attacker.api_post("/sso/request-domain-verification",
                              {"providerId": "evil", "domain": "evil.test"}).json()["domainVerificationToken"]
    dns_server.txt(ATTACKER_RECORD, token)
    attacker.api_post("/sso/verify-domain", {"providerId": "evil", "domain": "evil.test"})

    response = api.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/d", "errorCallbackURL": "/oops"})
    assert response.status_code == 200, response.content
    params = authorize_params(response.json()["url"])
    stub_idp.id_token = stub_idp.sign(stub_idp.claims(params["nonce"], email="ceo@corp.test", sub="mallory"))
    done = api.get("/api/auth/sso/callback/evil", {"code": "c", "state": params["state"]})
    assert "error=" in done["Location"]
    assert not Account.objects.filter(provider_id="evil", user=ceo).exists()
    assert not Session.objects.filter(user=ceo).exists()
