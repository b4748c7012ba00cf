"""A provider cannot claim a domain another provider verified (issue 14 §3, I1).

The attacker holds an ordinary account and registers a provider for the victim company's domain, or
adds it to the list of a provider they already verified for their own domain. Even where they can
get a matching TXT record published (a DNS operator who answers anything, a sloppy wildcard), the
domain another provider proved stays that provider's: ``DOMAIN_CLAIMED``, before any lookup.
"""

import pytest

from sso import routing
from sso.models import SsoProviderDomain
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, dns_server, sign_in  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def register(client, provider_id, domain):
    response = client.api_post("/sso/register", skip_discovery_body(provider_id=provider_id, domain=domain))
    assert response.status_code == 200, response.content
    return {item["domain"]: item["domainVerificationToken"] for item in response.json()["domains"]}


@pytest.fixture
def victim(sign_in, dns_server):
    client = sign_in("admin@corp.test")
    token = register(client, "corp", "corp.test")["corp.test"]
    dns_server.txt("_auth-token-corp.corp.test", token)
    assert client.api_post("/sso/verify-domain", {"providerId": "corp"}).status_code == 204
    return client


def test_a_second_provider_cannot_verify_a_domain_already_verified(victim, sign_in, dns_server):
    attacker = sign_in("mallory@evil.test")
    token = register(attacker, "evil", "corp.test")["corp.test"]
    dns_server.txt("_auth-token-evil.corp.test", token)  # even with a matching record
    queries = len(dns_server.queries)
    response = attacker.api_post("/sso/verify-domain", {"providerId": "evil"})
    assert response.status_code == 409
    assert error_of(response)["code"] == "DOMAIN_CLAIMED"
    assert len(dns_server.queries) == queries  # refused before any lookup
    assert SsoProviderDomain.objects.get(provider__provider_id="evil").status == "pending"
    assert routing.provider_for_hostname("corp.test").provider_id == "corp"


def test_adding_the_domain_to_an_own_verified_provider_does_not_claim_it(victim, sign_in, dns_server):
    attacker = sign_in("mallory@evil.test")
    token = register(attacker, "evil", "evil.test")["evil.test"]
    dns_server.txt("_auth-token-evil.evil.test", token)
    assert attacker.api_post("/sso/verify-domain", {"providerId": "evil"}).status_code == 204
    updated = attacker.api_post("/sso/update-provider", {"providerId": "evil", "domain": ["evil.test", "corp.test"]})
    assert {item["domain"]: item["status"] for item in updated.json()["domains"]} == {
        "evil.test": "verified", "corp.test": "pending"}
    new_token = SsoProviderDomain.objects.get(provider__provider_id="evil", domain="corp.test").token
    dns_server.txt("_auth-token-evil.corp.test", new_token)
    response = attacker.api_post("/sso/verify-domain", {"providerId": "evil", "domain": "corp.test"})
    assert error_of(response)["code"] == "DOMAIN_CLAIMED"
    assert routing.provider_for_hostname("corp.test").provider_id == "corp"


def test_the_recheck_does_not_verify_a_claimed_domain_either(victim, sign_in, dns_server):
    import io

    from django.core.management import call_command

    attacker = sign_in("mallory@evil.test")
    token = register(attacker, "evil", "corp.test")["corp.test"]
    dns_server.txt("_auth-token-evil.corp.test", token)
    out = io.StringIO()
    call_command("sso_verify_domain", "--all", stdout=out)
    assert "evil corp.test: claimed" in out.getvalue()
    assert SsoProviderDomain.objects.get(provider__provider_id="evil").status == "pending"


def test_a_case_or_trailing_dot_variant_is_the_same_domain(victim, sign_in, dns_server):
    attacker = sign_in("mallory@evil.test")
    token = register(attacker, "evil", "CORP.test.")["corp.test"]
    dns_server.txt("_auth-token-evil.corp.test", token)
    response = attacker.api_post("/sso/verify-domain", {"providerId": "evil", "domain": "Corp.Test"})
    assert error_of(response)["code"] == "DOMAIN_CLAIMED"


def test_a_claim_made_while_the_lookups_ran_wins_over_the_later_write(sign_in, dns_server):
    # Both providers' lookups passed (say both were handed the DNS); the first write wins, the second
    # is refused when it re-checks with the domain's rows locked.
    from sso import domains
    from sso.models import SsoProvider

    first, second = sign_in("a@corp.test"), sign_in("b@corp.test")
    register(first, "first", "corp.test")
    register(second, "late", "corp.test")
    winner, loser = (SsoProvider.objects.get(provider_id=name) for name in ("first", "late"))
    domains.record_outcome(winner, domains.rows(winner), [])
    with pytest.raises(domains.APIError) as refused:
        domains.record_outcome(loser, domains.rows(loser), [])
    assert refused.value.code == "DOMAIN_CLAIMED"
    assert SsoProviderDomain.objects.get(provider=loser).status == "pending"
