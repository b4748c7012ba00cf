"""Domain verification through a real DNS server on a loopback UDP port (sso.md §7)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sso.models import SsoProvider, SsoProviderDomain
from tests.conftest import ApiClient, error_of
from tests.sso.bodies import skip_discovery_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def registered(sign_in):
    client = sign_in()
    response = client.api_post("/sso/register", skip_discovery_body(domain="acme.com"))
    client.token_value = response.json()["domainVerificationToken"]
    return client


def mark_verified():
    """The provider verified the way the admin or a fixture does it: through save(), which marks every
    domain row verified. A bulk update of the flag alone verifies nothing: the rows are what count (I1)."""
    provider = SsoProvider.objects.get()
    provider.domain_verified = True
    provider.save()


def test_request_returns_the_unexpired_token_unchanged_with_201(registered):
    response = registered.api_post("/sso/request-domain-verification", {"providerId": "acme"})
    assert response.status_code == 201
    assert response.json() == {"domainVerificationToken": registered.token_value}


def test_request_issues_a_new_token_once_the_old_one_expired(registered):
    SsoProviderDomain.objects.update(token_expires_at=timezone.now() - timedelta(seconds=1))
    token = registered.api_post("/sso/request-domain-verification", {"providerId": "acme"}).json()[
        "domainVerificationToken"]
    assert token != registered.token_value and len(token) == 24
    assert SsoProviderDomain.objects.get().token == token


def test_request_for_a_verified_domain_is_409(registered):
    mark_verified()
    response = registered.api_post("/sso/request-domain-verification", {"providerId": "acme"})
    assert response.status_code == 409
    assert error_of(response) == {"message": "Domain has already been verified", "code": "DOMAIN_VERIFIED",
                                  "status": 409}


def test_request_errors_follow_the_access_rule(registered, sign_in):
    assert ApiClient().api_post("/sso/request-domain-verification", {"providerId": "acme"}).status_code == 401
    assert registered.api_post("/sso/request-domain-verification", {"providerId": "x"}).status_code == 404
    stranger = sign_in("eve@evil.com")
    assert stranger.api_post("/sso/request-domain-verification", {"providerId": "acme"}).status_code == 403


def test_verify_with_the_bare_token_record_answers_204_without_body(registered, dns_server):
    dns_server.txt("_auth-token-acme.acme.com", registered.token_value)
    response = registered.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert response.status_code == 204
    assert response.content == b""
    assert SsoProvider.objects.get().domain_verified is True
    assert "_auth-token-acme.acme.com" in dns_server.queries


def test_verify_with_the_prefixed_record_value(registered, dns_server):
    dns_server.txt("_auth-token-acme.acme.com", "unrelated", f"_auth-token-acme={registered.token_value}")
    assert registered.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 204


def test_verify_joins_the_chunks_of_a_record(registered, dns_server):
    token = registered.token_value
    dns_server.txt("_auth-token-acme.acme.com", [token[:10].encode(), token[10:].encode()])
    assert registered.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 204


def test_wrong_value_is_502_and_nothing_is_verified(registered, dns_server):
    dns_server.txt("_auth-token-acme.acme.com", "wrong-token")
    response = registered.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert response.status_code == 502
    assert error_of(response) == {
        "message": "Unable to verify domain ownership for acme.com. Try again later",
        "code": "DOMAIN_VERIFICATION_FAILED", "status": 502}
    assert SsoProvider.objects.get().domain_verified is False


def test_no_record_at_all_is_502(registered, dns_server):
    response = registered.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert response.status_code == 502


def test_every_domain_of_the_list_needs_its_own_record(sign_in, dns_server):
    client = sign_in()
    registered = client.api_post("/sso/register", skip_discovery_body(domain="acme.com, acme.org")).json()
    tokens = {item["domain"]: item["domainVerificationToken"] for item in registered["domains"]}
    assert registered["domainVerificationToken"] == tokens["acme.com"]
    dns_server.txt("_auth-token-acme.acme.com", tokens["acme.com"])
    response = client.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert response.status_code == 502
    assert "acme.org" in error_of(response)["message"]
    dns_server.txt("_auth-token-acme.acme.org", tokens["acme.org"])
    assert client.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 204
    assert SsoProvider.objects.get().domain_verified is True


def test_domain_is_normalised_to_a_bare_hostname(sign_in, dns_server):
    client = sign_in()
    token = client.api_post("/sso/register", skip_discovery_body(domain="https://ACME.com:443/login")).json()[
        "domainVerificationToken"]
    dns_server.txt("_auth-token-acme.acme.com", token)
    assert client.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 204


def test_an_invalid_domain_is_refused_at_registration(sign_in):
    response = sign_in().api_post("/sso/register", skip_discovery_body(domain="acme..com"))
    assert error_of(response) == {"code": "VALIDATION_ERROR", "status": 400,
                                  "message": "[body.domain] Invalid domain"}
    assert not SsoProvider.objects.exists()


def test_an_invalid_stored_domain_is_400_before_any_lookup(registered, dns_server):
    SsoProvider.objects.update(domain="acme..com")  # a row written before registration checked it
    response = registered.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_DOMAIN"
    assert dns_server.queries == []


def test_verify_an_already_verified_domain_is_409(registered, dns_server):
    mark_verified()
    response = registered.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert error_of(response)["code"] == "DOMAIN_VERIFIED"


def test_identifier_over_63_characters_is_400(sign_in, dns_server):
    client = sign_in()
    provider_id = "p" * 60
    client.api_post("/sso/register", skip_discovery_body(provider_id))
    response = client.api_post("/sso/verify-domain", {"providerId": provider_id})
    assert response.status_code == 400
    assert error_of(response) == {
        "message": "Verification identifier exceeds the DNS label limit of 63 characters",
        "code": "IDENTIFIER_TOO_LONG", "status": 400}


def test_expired_token_is_no_pending_verification(registered, dns_server):
    dns_server.txt("_auth-token-acme.acme.com", registered.token_value)
    SsoProviderDomain.objects.update(token_expires_at=timezone.now() - timedelta(seconds=1))
    response = registered.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert response.status_code == 404
    assert error_of(response)["code"] == "NO_PENDING_VERIFICATION"


def test_verify_follows_the_access_rule(registered, sign_in, dns_server):
    dns_server.txt("_auth-token-acme.acme.com", registered.token_value)
    assert ApiClient().api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 401
    response = sign_in("eve@evil.com").api_post("/sso/verify-domain", {"providerId": "acme"})
    assert error_of(response)["code"] == "PROVIDER_ACCESS_DENIED"
    assert SsoProvider.objects.get().domain_verified is False


def test_endpoints_do_not_exist_without_domain_verification(registered, configure_sso):
    configure_sso(domain_verification={"enabled": False})
    assert registered.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 404
    assert registered.api_post("/sso/request-domain-verification", {"providerId": "acme"}).status_code == 404


def test_in_process_verify_returns_none(registered, dns_server):
    from authservice.api.server import auth

    dns_server.txt("_auth-token-acme.acme.com", registered.token_value)
    cookie = "; ".join(f"{m.key}={m.value}" for m in registered.cookies.values())
    assert auth.api.verify_domain(body={"providerId": "acme"}, headers={"cookie": cookie}) is None
    assert SsoProvider.objects.get().domain_verified is True
