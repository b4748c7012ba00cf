"""I1/I5: an ordinary account cannot take over another party's SSO provider or ride on its DNS proof.

The attacker holds ordinary accounts, runs their own IdP, and can register providers for any domain.
They try to:

- register a providerId that differs from a victim's verified one only by letter case: DNS owner
  names are case-insensitive, so ``_auth-token-ACME.corp.test`` *is* the victim's published record;
  the record's value (the victim's token) must still not verify the attacker's provider;
- move a verified provider's domain list to another company's domain (the DNS proof covered the
  old list only): the provider must fall back to unverified and stop routing/signing in;
- manage an organization's provider as a plain member, or as an admin of another organization
  (update it, read its pending domain token, delete it).

DNS is a real server on a loopback UDP port; everything else is the real API on the test database.
"""

import pytest

from sso import organizations
from sso.models import SsoProvider
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, dns_server, sign_in  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def _register(client, provider_id, domain, **extra):
    response = client.api_post("/sso/register", skip_discovery_body(provider_id=provider_id, domain=domain,
                                                                     **extra))
    assert response.status_code == 200, response.content
    return response.json()["domainVerificationToken"]


def test_a_case_variant_provider_id_cannot_use_the_victims_published_record(sign_in, dns_server):
    victim = sign_in("admin@corp.test")
    token = _register(victim, "acme", "corp.test")
    dns_server.txt("_auth-token-acme.corp.test", token)

    # The attacker races in after the record is published, before the victim verifies (once the
    # victim verified, DOMAIN_CLAIMED refuses any other provider before a lookup).
    attacker = sign_in("mallory@evil.test")
    attacker_token = _register(attacker, "ACME", "corp.test")
    assert attacker_token != token
    response = attacker.api_post("/sso/verify-domain", {"providerId": "ACME"})
    assert response.status_code == 502, response.content
    assert error_of(response)["code"] == "DOMAIN_VERIFICATION_FAILED"
    assert SsoProvider.objects.get(provider_id="ACME").domain_verified is False
    assert victim.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 204
    # Routing by the victim's domain still finds the victim's provider only.
    from sso import routing
    assert routing.provider_for_hostname("corp.test").provider_id == "acme"


def test_moving_a_verified_provider_to_another_domain_unverifies_it(sign_in, dns_server):
    attacker = sign_in("mallory@evil.test")
    token = _register(attacker, "evil", "evil.test")
    dns_server.txt("_auth-token-evil.evil.test", token)
    assert attacker.api_post("/sso/verify-domain", {"providerId": "evil"}).status_code == 204

    for domain in ("evil.test,corp.test", "https://corp.test", "CORP.TEST.", "corp.test"):
        response = attacker.api_post("/sso/update-provider", {"providerId": "evil", "domain": domain})
        assert response.status_code == 200, response.content
        provider = SsoProvider.objects.get(provider_id="evil")
        assert provider.domain_verified is False, domain
        start = attacker.api_post("/sign-in/sso", {"email": "ceo@corp.test", "callbackURL": "/"})
        assert start.status_code in (401, 404), (domain, start.content)
        # Re-verification with the old record (the old token was used up) proves nothing.
        response = attacker.api_post("/sso/verify-domain", {"providerId": "evil"})
        assert response.status_code in (404, 502), response.content
        assert SsoProvider.objects.get(provider_id="evil").domain_verified is False


def test_only_admins_of_the_providers_organization_manage_it(sign_in):
    owner = sign_in("owner@corp.test")
    org = owner.api_post("/organization/create", {"name": "Corp", "slug": "corp"}).json()
    _register(owner, "corp-sso", "corp.test", organizationId=org["id"])

    member = sign_in("member@corp.test")
    organizations.add_member(org["id"], member.user, "member")
    outsider = sign_in("mallory@evil.test")
    other_org = outsider.api_post("/organization/create", {"name": "Evil", "slug": "evil"}).json()
    assert other_org["id"] != org["id"]

    for client in (member, outsider):
        for path, body in (
            ("/sso/update-provider", {"providerId": "corp-sso", "domain": "evil.test"}),
            ("/sso/update-provider", {"providerId": "corp-sso",
                                      "oidcConfig": {"clientId": "x", "clientSecret": "y"}}),
            ("/sso/request-domain-verification", {"providerId": "corp-sso"}),
            ("/sso/verify-domain", {"providerId": "corp-sso"}),
            ("/sso/delete-provider", {"providerId": "corp-sso"}),
        ):
            response = client.api_post(path, body)
            assert response.status_code == 403, (path, response.content)
            assert "domainVerificationToken" not in response.content.decode()
        assert client.api_get("/sso/get-provider", {"providerId": "corp-sso"}).status_code == 403
        assert "corp-sso" not in client.api_get("/sso/providers").content.decode()
    # A member cannot attach a new provider to the organization either.
    response = member.api_post("/sso/register", skip_discovery_body(provider_id="mine", domain="corp.test",
                                                                    organizationId=org["id"]))
    assert response.status_code == 403
    provider = SsoProvider.objects.get(provider_id="corp-sso")
    assert provider.domain == "corp.test" and provider.oidc_config["clientId"] != "x"
