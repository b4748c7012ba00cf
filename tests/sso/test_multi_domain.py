"""Several domains per provider, each verified on its own (issue 14 §3; docs/sso-domains.md).

Real DNS on a loopback UDP port (the ``dns_server`` fixture); the service's TXT lookups go through
dnspython to it.
"""

import io
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.core.management import call_command

from sso.models import SsoProvider, SsoProviderDomain
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body

pytestmark = pytest.mark.django_db


def register(client, domain, provider_id="acme"):
    response = client.api_post("/sso/register", skip_discovery_body(provider_id=provider_id, domain=domain))
    assert response.status_code == 200, response.content
    return response.json()


def tokens_of(answer):
    return {item["domain"]: item["domainVerificationToken"] for item in answer["domains"]}


def state(domain):
    return SsoProviderDomain.objects.get(domain=domain).status


@pytest.fixture
def owner(sign_in):
    return sign_in()


@pytest.fixture
def corp(owner):
    """A provider for corp.com, corp.de and eng.corp.com, nothing verified yet."""
    answer = register(owner, ["corp.com", "corp.de", "eng.corp.com"])
    owner.tokens = tokens_of(answer)
    return answer


def publish(dns_server, domain, token, provider_id="acme"):
    dns_server.txt(f"_auth-token-{provider_id}.{domain}", token)


# --- the domain list -------------------------------------------------------------------------------
def test_a_list_is_accepted_and_returned_in_better_auths_comma_separated_form(corp):
    assert corp["domain"] == "corp.com,corp.de,eng.corp.com"
    assert [item["domain"] for item in corp["domains"]] == ["corp.com", "corp.de", "eng.corp.com"]


def test_a_comma_separated_string_is_accepted_as_better_auth_sends_it(owner):
    answer = register(owner, "corp.com, corp.de")
    assert answer["domain"] == "corp.com, corp.de"
    assert [item["domain"] for item in answer["domains"]] == ["corp.com", "corp.de"]


@pytest.mark.parametrize("domain", [[], ["corp.com", 7], ["a.com,b.com"], ["x.com"] * 21, ["acme..com"]])
def test_a_bad_list_is_a_validation_error(owner, domain):
    response = owner.api_post("/sso/register", skip_discovery_body(domain=domain))
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert not SsoProvider.objects.exists()


def test_every_domain_gets_its_own_token_and_txt_record(corp):
    tokens = tokens_of(corp)
    assert len(set(tokens.values())) == 3 and all(len(token) == 24 for token in tokens.values())
    assert corp["domainVerificationToken"] == tokens["corp.com"]
    assert {item["txtRecord"] for item in corp["domains"]} == {
        "_auth-token-acme.corp.com", "_auth-token-acme.corp.de", "_auth-token-acme.eng.corp.com"}
    assert {item["status"] for item in corp["domains"]} == {"pending"}


# --- verification per domain ------------------------------------------------------------------------
def test_verify_one_domain_by_name_leaves_the_others_pending(owner, corp, dns_server):
    publish(dns_server, "corp.de", owner.tokens["corp.de"])
    response = owner.api_post("/sso/verify-domain", {"providerId": "acme", "domain": "corp.de"})
    assert response.status_code == 204
    assert (state("corp.com"), state("corp.de"), state("eng.corp.com")) == ("pending", "verified", "pending")
    assert dns_server.queries == ["_auth-token-acme.corp.de"]
    # domain_verified keeps better-auth's meaning: the provider's domains are verified, all of them.
    assert SsoProvider.objects.get().domain_verified is False


def test_a_domain_verifies_only_with_its_own_token(owner, corp, dns_server):
    publish(dns_server, "corp.de", owner.tokens["corp.com"])
    response = owner.api_post("/sso/verify-domain", {"providerId": "acme", "domain": "corp.de"})
    assert response.status_code == 502
    assert error_of(response)["message"] == "Unable to verify domain ownership for corp.de. Try again later"
    assert state("corp.de") == "failed"


def test_verify_without_a_domain_records_each_outcome_and_names_the_first_failure(owner, corp, dns_server):
    publish(dns_server, "corp.com", owner.tokens["corp.com"])
    publish(dns_server, "eng.corp.com", owner.tokens["eng.corp.com"])
    response = owner.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert response.status_code == 502
    assert "corp.de" in error_of(response)["message"]
    assert (state("corp.com"), state("corp.de"), state("eng.corp.com")) == ("verified", "failed", "verified")
    assert SsoProviderDomain.objects.get(domain="corp.de").checked_at is not None


def test_once_every_domain_is_verified_the_provider_is_and_a_further_verify_is_409(owner, corp, dns_server):
    for domain, token in owner.tokens.items():
        publish(dns_server, domain, token)
    assert owner.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 204
    assert SsoProvider.objects.get().domain_verified is True
    response = owner.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert error_of(response)["code"] == "DOMAIN_VERIFIED"


def test_a_domain_the_provider_does_not_list_is_404(owner, corp):
    response = owner.api_post("/sso/verify-domain", {"providerId": "acme", "domain": "other.com"})
    assert response.status_code == 404
    assert error_of(response)["code"] == "DOMAIN_NOT_LISTED"


def test_an_invalid_domain_name_is_400(owner, corp):
    response = owner.api_post("/sso/request-domain-verification", {"providerId": "acme", "domain": "a..b"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_DOMAIN"


def test_request_for_one_domain_answers_its_token_and_record(owner, corp):
    response = owner.api_post("/sso/request-domain-verification", {"providerId": "acme", "domain": "CORP.de"})
    assert response.status_code == 201
    body = response.json()
    assert body["domainVerificationToken"] == owner.tokens["corp.de"]
    assert [item["txtRecord"] for item in body["domains"]] == ["_auth-token-acme.corp.de"]


def test_request_for_a_verified_domain_is_409(owner, corp, dns_server):
    publish(dns_server, "corp.de", owner.tokens["corp.de"])
    owner.api_post("/sso/verify-domain", {"providerId": "acme", "domain": "corp.de"})
    response = owner.api_post("/sso/request-domain-verification", {"providerId": "acme", "domain": "corp.de"})
    assert error_of(response)["code"] == "DOMAIN_VERIFIED"


def test_get_provider_shows_each_domains_state(owner, corp, dns_server):
    publish(dns_server, "corp.de", owner.tokens["corp.de"])
    owner.api_post("/sso/verify-domain", {"providerId": "acme", "domain": "corp.de"})
    body = owner.api_get("/sso/get-provider", {"providerId": "acme"}).json()
    assert {item["domain"]: item["status"] for item in body["domains"]} == {
        "corp.com": "pending", "corp.de": "verified", "eng.corp.com": "pending"}
    verified = next(item for item in body["domains"] if item["domain"] == "corp.de")
    assert verified["verifiedAt"] and verified["domainVerificationToken"] is None


# --- changing the list -------------------------------------------------------------------------------
def test_adding_a_domain_keeps_the_verified_ones_and_the_new_one_starts_pending(owner, dns_server):
    answer = register(owner, "corp.com")
    publish(dns_server, "corp.com", answer["domainVerificationToken"])
    assert owner.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 204
    response = owner.api_post("/sso/update-provider", {"providerId": "acme", "domain": ["corp.com", "corp.de"]})
    assert response.status_code == 200, response.content
    assert {item["domain"]: item["status"] for item in response.json()["domains"]} == {
        "corp.com": "verified", "corp.de": "pending"}
    assert response.json()["domainVerified"] is False
    new = SsoProviderDomain.objects.get(domain="corp.de")
    assert len(new.token) == 24 and new.token != answer["domainVerificationToken"]


def test_removing_the_pending_domain_makes_the_provider_verified_again(owner, corp, dns_server):
    publish(dns_server, "corp.com", owner.tokens["corp.com"])
    owner.api_post("/sso/verify-domain", {"providerId": "acme", "domain": "corp.com"})
    response = owner.api_post("/sso/update-provider", {"providerId": "acme", "domain": "corp.com"})
    assert response.json()["domainVerified"] is True
    assert list(SsoProviderDomain.objects.values_list("domain", flat=True)) == ["corp.com"]


# --- routing ------------------------------------------------------------------------------------------
def route(api, **selector):
    response = api.api_post("/sign-in/sso", {"callbackURL": "/d", **selector})
    if response.status_code != 200:
        return response.status_code
    return dict(parse_qsl(urlsplit(response.json()["url"]).query))["client_id"]


def test_routing_uses_the_verified_domains_only(api, owner, corp, dns_server):
    publish(dns_server, "corp.de", owner.tokens["corp.de"])
    owner.api_post("/sso/verify-domain", {"providerId": "acme", "domain": "corp.de"})
    assert route(api, email="ada@corp.de") == "client-123456"
    assert route(api, email="ada@corp.com") == 404
    assert route(api, domain="eng.corp.com") == 404


def test_the_most_specific_verified_domain_wins(api, owner, sign_in, dns_server):
    answer = register(owner, "corp.com")
    publish(dns_server, "corp.com", answer["domainVerificationToken"])
    owner.api_post("/sso/verify-domain", {"providerId": "acme"})
    engineering = sign_in("lead@eng.corp.com")
    response = engineering.api_post("/sso/register", skip_discovery_body(
        provider_id="eng", domain="eng.corp.com", oidc={"clientId": "eng-client"}))
    publish(dns_server, "eng.corp.com", response.json()["domainVerificationToken"], provider_id="eng")
    assert engineering.api_post("/sso/verify-domain", {"providerId": "eng"}).status_code == 204
    assert route(api, email="ada@eng.corp.com") == "eng-client"
    assert route(api, email="ada@team.eng.corp.com") == "eng-client"
    assert route(api, email="ada@corp.com") == "client-123456"
    assert route(api, email="ada@sales.corp.com") == "client-123456"


def test_a_provider_with_one_verified_domain_passes_the_sign_in_gate(api, owner, corp, dns_server):
    publish(dns_server, "corp.de", owner.tokens["corp.de"])
    owner.api_post("/sso/verify-domain", {"providerId": "acme", "domain": "corp.de"})
    assert route(api, providerId="acme") == "client-123456"


def test_a_provider_with_no_verified_domain_is_refused_at_the_gate(api, corp):
    response = api.api_post("/sign-in/sso", {"callbackURL": "/d", "providerId": "acme"})
    assert error_of(response)["code"] == "DOMAIN_NOT_VERIFIED"


# --- sso_verify_domain ----------------------------------------------------------------------------------
def test_the_command_shows_the_state_of_every_domain(owner, corp, dns_server):
    publish(dns_server, "corp.de", owner.tokens["corp.de"])
    out = io.StringIO()
    call_command("sso_verify_domain", "acme", "--domain", "corp.de", stdout=out)
    text = out.getvalue()
    assert "corp.de: verified, last checked 20" in text
    assert "corp.com: pending, last checked never" in text


def test_the_command_prints_one_record_per_domain_to_publish(owner, corp):
    out = io.StringIO()
    call_command("sso_verify_domain", "acme", "--request-token", stdout=out)
    for domain, token in owner.tokens.items():
        assert f'_auth-token-acme.{domain}  TXT  "{token}"' in out.getvalue()


def test_sso_providers_lists_a_partly_verified_provider(owner, corp, dns_server):
    publish(dns_server, "corp.de", owner.tokens["corp.de"])
    owner.api_post("/sso/verify-domain", {"providerId": "acme", "domain": "corp.de"})
    out = io.StringIO()
    call_command("sso_providers", stdout=out)
    assert "partly (1/3)" in out.getvalue()
