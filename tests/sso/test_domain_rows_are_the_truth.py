"""Each domain row's own status is what sign-in trusts; ``domain_verified`` is only a summary of the rows
(I1, issue 14 §3, docs/sso-domains.md "domainVerified").

The flag is recomputed from the rows with the provider row locked, and never written back from a copy
that did not change it. The writes that follow slow DNS lookups (verify-domain, the ``--all`` re-check)
and slow fetches (update-provider) check under a lock that what they read is still there.
Real DNS on a loopback UDP port, real database.
"""

import io

import pytest
from django.core.management import call_command
from django.db import connection

from sso import domain_recheck, domains, routing
from sso.models import SsoProvider, SsoProviderDomain
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body

pytestmark = pytest.mark.django_db


def register(client, provider_id, domain):
    response = client.api_post("/sso/register", skip_discovery_body(provider_id=provider_id, domain=domain))
    assert response.status_code == 200, response.content
    return {item["domain"]: item["domainVerificationToken"] for item in response.json()["domains"]}


def status(provider_id, host):
    return SsoProviderDomain.objects.get(provider__provider_id=provider_id, domain=host).status


def recheck():
    out = io.StringIO()
    call_command("sso_verify_domain", "--all", stdout=out)
    return out.getvalue()


@pytest.fixture
def pending(sign_in):
    """acme: corp.com, registered, not verified."""
    owner = sign_in()
    owner.tokens = register(owner, "acme", "corp.com")
    return owner


@pytest.fixture
def verified(sign_in, dns_server):
    """corp: corp.test, verified by its DNS record."""
    owner = sign_in("admin@corp.test")
    dns_server.txt("_auth-token-corp.corp.test", register(owner, "corp", "corp.test")["corp.test"])
    assert owner.api_post("/sso/verify-domain", {"providerId": "corp"}).status_code == 204
    return owner


def test_a_bulk_update_of_the_flag_verifies_nothing(pending):
    SsoProvider.objects.update(domain_verified=True)
    provider = SsoProvider.objects.get()
    assert routing.provider_for_hostname("corp.com") is None
    assert provider.trusted_domains() == []
    assert provider.domain_trusted() is False


def test_a_bulk_update_of_the_flag_does_not_claim_the_domain(pending, sign_in):
    SsoProvider.objects.update(domain_verified=True)
    other = SsoProvider.objects.get(provider_id="acme")
    assert domains.claimed_elsewhere(other, "corp.com") is False
    newcomer = sign_in("it@corp.com")
    register(newcomer, "newcomer", "corp.com")
    assert domains.claimed_elsewhere(SsoProvider.objects.get(provider_id="newcomer"), "corp.com") is False


def test_a_stale_copy_saved_later_keeps_the_domain_list_and_the_flag_another_request_wrote(pending, dns_server):
    dns_server.txt("_auth-token-acme.corp.com", pending.tokens["corp.com"])
    assert pending.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 204
    stale = SsoProvider.objects.get()  # flag True, domain corp.com
    response = pending.api_post("/sso/update-provider", {"providerId": "acme", "domain": ["corp.com", "corp.de"]})
    assert response.status_code == 200, response.content
    stale.organization_provisioning = {"roleMapping": {"attribute": "groups", "values": {}}}
    stale.save()
    stored = SsoProvider.objects.get()
    assert stored.domain == "corp.com,corp.de"
    assert stored.domain_verified is False and stale.domain_verified is False
    assert status("acme", "corp.de") == "pending"
    assert stored.organization_provisioning is not None


def test_update_provider_refuses_a_configuration_another_update_changed_meanwhile(pending):
    fired = []

    def other_update_right_after_the_read(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        lowered = sql.lower()
        if not fired and lowered.lstrip().startswith("select") and '"sso_ssoprovider"' in lowered.split(" where ")[0]:
            fired.append(True)
            other = pending.api_post("/sso/update-provider", {"providerId": "acme", "oidcConfig": {"scopes": ["x"]}})
            assert other.status_code == 200, other.content
        return result

    with connection.execute_wrapper(other_update_right_after_the_read):
        response = pending.api_post("/sso/update-provider",
                                    {"providerId": "acme", "oidcConfig": {"scopes": ["openid"]}})
    assert fired
    assert response.status_code == 409
    assert error_of(response)["code"] == "SSO_PROVIDER_CHANGED"
    assert SsoProvider.objects.get().oidc_config["scopes"] == ["x"]  # the first writer's change is kept


def test_update_provider_writes_only_the_columns_it_changes(pending):
    SsoProvider.objects.update(organization_provisioning={"roleMapping": {"attribute": "g", "values": {}}})
    response = pending.api_post("/sso/update-provider", {"providerId": "acme", "oidcConfig": {"scopes": ["openid"]}})
    assert response.status_code == 200, response.content
    assert SsoProvider.objects.get().organization_provisioning == {"roleMapping": {"attribute": "g", "values": {}}}


def test_a_failed_lookup_never_unverifies_a_row_verified_meanwhile(pending):
    provider = SsoProvider.objects.get()
    looked_up = domains.rows(provider)[0]  # pending when its lookup started
    SsoProviderDomain.objects.filter(pk=looked_up.pk).update(status="verified")  # verified meanwhile
    domains.record_outcome(provider, [], [looked_up])
    assert status("acme", "corp.com") == "verified"
    assert SsoProvider.objects.get().domain_verified is True


def test_the_recheck_verifies_a_domain_another_provider_owns_as_claimed_only(verified, sign_in, dns_server):
    attacker = sign_in("mallory@evil.test")
    token = register(attacker, "evil", "corp.test")["corp.test"]
    dns_server.txt("_auth-token-evil.corp.test", token)
    assert "evil corp.test: claimed" in recheck()
    assert status("evil", "corp.test") != "verified"
    assert routing.provider_for_hostname("corp.test").provider_id == "corp"


def test_the_recheck_writes_nothing_when_the_domain_list_changed_during_the_lookup(pending, dns_server):
    dns_server.txt("_auth-token-acme.corp.com", pending.tokens["corp.com"])
    real = domains.resolver()

    class ListChangedDuringLookup:
        def resolve(self, name, *args, **kwargs):
            response = pending.api_post("/sso/update-provider",
                                        {"providerId": "acme", "domain": ["corp.com", "corp.de"]})
            assert response.status_code == 200, response.content
            return real.resolve(name, *args, **kwargs)

    provider = SsoProvider.objects.get()
    row = domains.rows(provider)[0]
    assert domain_recheck.recheck(provider, row, ListChangedDuringLookup()) == domain_recheck.CHANGED
    assert status("acme", "corp.com") != "verified"


def test_unverifying_a_vanished_record_changes_that_domain_only(verified, sign_in, dns_server, configure_sso):
    configure_sso(domain_verification={"unverify_on_missing_record": True})
    owner = sign_in("owner@multi.test")
    tokens = register(owner, "multi", "a.multi.test,b.multi.test,c.multi.test")
    dns_server.txt("_auth-token-multi.a.multi.test", tokens["a.multi.test"])
    assert owner.api_post("/sso/verify-domain", {"providerId": "multi", "domain": "a.multi.test"}).status_code == 204
    dns_server.txt("_auth-token-multi.b.multi.test", tokens["b.multi.test"])
    assert owner.api_post("/sso/verify-domain", {"providerId": "multi", "domain": "b.multi.test"}).status_code == 204
    del dns_server.resolver.records["_auth-token-multi.a.multi.test"]
    text = recheck()
    assert "multi a.multi.test: unverified" in text
    assert [status("multi", host) for host in ("a.multi.test", "b.multi.test", "c.multi.test")] == [
        "failed", "verified", "failed"]
    assert SsoProvider.objects.get(provider_id="multi").domain_verified is False
