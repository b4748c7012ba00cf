"""Attack 14, several domains per provider: attacks that the service holds (regression guards, I1).

Each test is one attempt by an attacker with an ordinary account who registers providers and runs the
DNS of their own domains, against a victim company whose provider verified ``corp.test``.
"""

import pytest

from sso import routing
from sso.models import Organization, SsoProvider, SsoProviderDomain
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, dns_server, sign_in  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def register(client, provider_id, domain, **changes):
    response = client.api_post("/sso/register", skip_discovery_body(provider_id=provider_id, domain=domain, **changes))
    assert response.status_code == 200, response.content
    return {item["domain"]: item["domainVerificationToken"] for item in response.json()["domains"]}


def publish_and_verify(client, dns, provider_id, host, token, **body):
    dns.txt(f"_auth-token-{provider_id}.{host}", token)
    return client.api_post("/sso/verify-domain", {"providerId": provider_id, **body})


@pytest.fixture
def victim(sign_in, dns_server):
    client = sign_in("admin@corp.test")
    tokens = register(client, "corp", "corp.test,xn--bcher-kva.test")
    for host, token in tokens.items():
        dns_server.txt(f"_auth-token-corp.{host}", token)
    assert client.api_post("/sso/verify-domain", {"providerId": "corp"}).status_code == 204
    return client


def test_the_unicode_form_of_a_verified_punycode_domain_is_claimed(victim, sign_in, dns_server):
    attacker = sign_in("mallory@evil.test")
    token = register(attacker, "evil", "BÜCHER.test.")["xn--bcher-kva.test"]
    response = publish_and_verify(attacker, dns_server, "evil", "xn--bcher-kva.test", token)
    assert error_of(response)["code"] == "DOMAIN_CLAIMED"
    assert routing.provider_for_hostname(routing.routing_hostname(email="ada@bücher.test")).provider_id == "corp"


def test_a_url_form_entry_with_userinfo_names_the_host_after_the_at(victim, sign_in, dns_server):
    # "https://corp.test@evil.test/" is evil.test wherever it is read: rows, routing and trust agree.
    attacker = sign_in("mallory@evil.test")
    tokens = register(attacker, "evil", "https://corp.test@evil.test/")
    assert list(tokens) == ["evil.test"]
    assert publish_and_verify(attacker, dns_server, "evil", "evil.test", tokens["evil.test"]).status_code == 204
    evil = SsoProvider.objects.get(provider_id="evil")
    assert evil.trusted_domains() == ["evil.test"]
    assert routing.provider_for_hostname("corp.test").provider_id == "corp"


def test_a_case_variant_provider_id_shares_the_record_name_but_not_the_token(sign_in, dns_server):
    # DNS names are case-insensitive: _auth-token-CORP.corp.test is the victim's record name. The
    # victim's pending token is published there; it is not the attacker's token.
    victim_client = sign_in("admin@corp.test")
    token = register(victim_client, "corp", "corp.test")["corp.test"]
    dns_server.txt("_auth-token-corp.corp.test", token)
    attacker = sign_in("mallory@evil.test")
    register(attacker, "CORP", "corp.test")
    response = attacker.api_post("/sso/verify-domain", {"providerId": "CORP"})
    assert response.status_code == 502
    assert SsoProviderDomain.objects.get(provider__provider_id="CORP").status == "failed"


def test_a_domain_removed_and_added_again_starts_pending_with_a_new_token(sign_in, dns_server):
    owner = sign_in("mallory@evil.test")
    tokens = register(owner, "evil", "evil.test,old.test")
    for host, token in tokens.items():
        dns_server.txt(f"_auth-token-evil.{host}", token)
    assert owner.api_post("/sso/verify-domain", {"providerId": "evil"}).status_code == 204
    owner.api_post("/sso/update-provider", {"providerId": "evil", "domain": "evil.test"})
    answer = owner.api_post("/sso/update-provider", {"providerId": "evil", "domain": "evil.test,old.test"}).json()
    states = {item["domain"]: item for item in answer["domains"]}
    assert states["old.test"]["status"] == "pending"
    assert states["old.test"]["domainVerificationToken"] not in (None, tokens["old.test"])


def test_the_token_of_one_domain_does_not_verify_another_domain_of_the_provider(sign_in, dns_server):
    owner = sign_in("mallory@evil.test")
    tokens = register(owner, "evil", "evil.test,corp.test")
    # The attacker publishes evil.test's token under their own name in both forms; corp.test has none.
    dns_server.txt("_auth-token-evil.evil.test", tokens["evil.test"], f"_auth-token-evil={tokens['corp.test']}")
    response = owner.api_post("/sso/verify-domain", {"providerId": "evil"})
    assert response.status_code == 502
    rows = dict(SsoProviderDomain.objects.values_list("domain", "status"))
    assert rows == {"evil.test": "verified", "corp.test": "failed"}


def test_update_provider_cannot_move_a_provider_into_another_organization(sign_in):
    attacker = sign_in("mallory@evil.test")
    register(attacker, "evil", "evil.test")
    target = Organization.objects.create(name="Victim", slug="victim")
    response = attacker.api_post("/sso/update-provider", {"providerId": "evil", "organizationId": target.pk,
                                                          "domain": "evil.test"})
    assert response.status_code in (200, 400)  # an unknown field: ignored or refused, never applied
    assert SsoProvider.objects.get(provider_id="evil").organization_id is None


def test_a_subdomain_entry_of_the_attacker_does_not_route_while_pending(victim, sign_in):
    attacker = sign_in("mallory@evil.test")
    register(attacker, "evil", "eng.corp.test")
    assert routing.provider_for_hostname(routing.routing_hostname(email="ada@ENG.corp.test.")).provider_id == "corp"
