"""``manage.py sso_verify_domain --all``: every domain re-checked, a vanished record recorded (issue 14 §3).

Whether a vanished record un-verifies its domain is ``domain_verification.unverify_on_missing_record``
(off by default). Real DNS on a loopback UDP port.
"""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.dispatch import receiver

from sso import routing, signals
from sso.models import SsoProvider, SsoProviderDomain
from tests.sso.bodies import skip_discovery_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def verified(sign_in, dns_server):
    """acme: corp.com and corp.de, both verified by their DNS records."""
    owner = sign_in()
    answer = owner.api_post("/sso/register", skip_discovery_body(domain="corp.com,corp.de")).json()
    for item in answer["domains"]:
        dns_server.txt(f"_auth-token-acme.{item['domain']}", item["domainVerificationToken"])
    assert owner.api_post("/sso/verify-domain", {"providerId": "acme"}).status_code == 204
    return owner


def recheck():
    out = io.StringIO()
    call_command("sso_verify_domain", "--all", stdout=out)
    return out.getvalue()


def row(domain):
    return SsoProviderDomain.objects.get(domain=domain)


def test_records_still_present_are_found_and_their_check_time_recorded(verified):
    before = row("corp.com").checked_at
    text = recheck()
    assert "acme corp.com: found" in text and "acme corp.de: found" in text
    assert "Checked: 2 found" in text
    assert row("corp.com").checked_at > before


def test_a_vanished_record_is_recorded_and_by_default_the_domain_stays_verified(verified, dns_server):
    del dns_server.resolver.records["_auth-token-acme.corp.de"]
    text = recheck()
    assert "acme corp.de: missing" in text
    assert row("corp.de").status == "verified"
    assert row("corp.de").record_missing_since is not None
    assert routing.provider_for_hostname("corp.de").provider_id == "acme"


def test_the_time_a_record_went_missing_is_kept_across_rechecks(verified, dns_server):
    del dns_server.resolver.records["_auth-token-acme.corp.de"]
    recheck()
    first = row("corp.de").record_missing_since
    recheck()
    assert row("corp.de").record_missing_since == first


def test_a_record_that_comes_back_clears_the_missing_mark(verified, dns_server):
    token = row("corp.de").token
    del dns_server.resolver.records["_auth-token-acme.corp.de"]
    recheck()
    dns_server.txt("_auth-token-acme.corp.de", token)
    recheck()
    assert row("corp.de").record_missing_since is None


def test_with_the_setting_on_a_vanished_record_unverifies_its_domain_only(verified, dns_server, configure_sso):
    configure_sso(domain_verification={"unverify_on_missing_record": True})
    received = []

    @receiver(signals.domain_unverified, weak=False)
    def capture(sender, **kwargs):
        received.append(kwargs["domain"])

    try:
        del dns_server.resolver.records["_auth-token-acme.corp.de"]
        assert "acme corp.de: unverified" in recheck()
    finally:
        signals.domain_unverified.disconnect(capture)
    assert received == ["corp.de"]
    assert (row("corp.com").status, row("corp.de").status) == ("verified", "failed")
    assert SsoProvider.objects.get().domain_verified is False
    assert routing.provider_for_hostname("corp.de") is None
    assert routing.provider_for_hostname("corp.com").provider_id == "acme"


def test_a_pending_domain_whose_record_appeared_is_verified_by_the_recheck(sign_in, dns_server):
    owner = sign_in()
    answer = owner.api_post("/sso/register", skip_discovery_body(domain="corp.com")).json()
    dns_server.txt("_auth-token-acme.corp.com", answer["domainVerificationToken"])
    assert "acme corp.com: verified" in recheck()
    assert SsoProvider.objects.get().domain_verified is True


def test_a_domain_verified_before_per_domain_tokens_is_reported_not_checked(make_user, dns_server):
    SsoProvider.objects.create(provider_id="legacy", issuer="https://idp", domain="old.com",
                               user=make_user(email="x@old.com"), domain_verified=True)
    assert "legacy old.com: no-token" in recheck()
    assert dns_server.queries == []


def test_all_takes_no_provider(verified):
    with pytest.raises(CommandError):
        call_command("sso_verify_domain", "acme", "--all", stdout=io.StringIO())
