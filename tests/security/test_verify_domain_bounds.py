"""I6: ``POST /sso/verify-domain`` cannot hold a worker for one DNS timeout per domain.

Any signed-up user may register a provider and ask for its domains to be verified. The domain list
is bounded where it enters (register, update) and again before the first lookup; every name, and
every record name ``_auth-token-{providerId}.{domain}``, is checked before any query is sent; and all
lookups of one request share one deadline (``domain_verification.dns_timeout``), instead of 5 s each
with no limit on their number (issue 12, "also found"). DNS is a real server on a loopback port.
"""

import time

import pytest
from dnslib.server import DNSServer

from sso import hostnames
from sso.models import SsoProvider
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import (  # noqa: F401 - fixtures
    DnsFixture, TxtResolver, _sso_defaults, configure_sso, dns_server, sign_in)

pytestmark = pytest.mark.django_db

TOO_MANY = ", ".join(f"d{index}.acme.com" for index in range(21))


class SlowResolver(TxtResolver):
    """Answers names in ``slow`` only after a delay, like a nameserver at the far end of the world."""

    def __init__(self):
        super().__init__()
        self.slow = {}

    def resolve(self, request, handler):
        delay = self.slow.get(str(request.q.qname).rstrip(".").lower())
        if delay:
            time.sleep(delay)  # the peer's behaviour; the service's deadline is what is set small
        return super().resolve(request, handler)


@pytest.fixture
def slow_dns(configure_sso):
    resolver = SlowResolver()
    server = DNSServer(resolver, port=0, address="127.0.0.1")
    server.start_thread()
    configure_sso(dns_nameservers=[f"127.0.0.1:{server.server.server_address[1]}"])
    yield DnsFixture(resolver, server.server.server_address[1]), resolver
    server.stop()


def register(client, domain, provider_id="acme"):
    return client.api_post("/sso/register", skip_discovery_body(provider_id=provider_id, domain=domain))


def test_registration_refuses_more_domains_than_the_limit(sign_in):
    response = register(sign_in(), TOO_MANY)
    assert response.status_code == 400
    assert error_of(response)["message"] == f"[body.domain] A provider may list at most {hostnames.MAX_DOMAINS} domains"
    assert not SsoProvider.objects.exists()


def test_registration_refuses_a_31_kib_domain(sign_in):
    response = register(sign_in(), "a." * 15_872 + "com")
    assert response.status_code == 400
    assert not SsoProvider.objects.exists()


def test_an_update_cannot_grow_the_list_past_the_limit(sign_in):
    client = sign_in()
    assert register(client, "acme.com").status_code == 200
    response = client.api_post("/sso/update-provider", {"providerId": "acme", "domain": TOO_MANY})
    assert response.status_code == 400
    assert SsoProvider.objects.get().domain == "acme.com"


def test_a_stored_list_past_the_limit_is_400_before_any_lookup(sign_in, dns_server):
    client = sign_in()
    assert register(client, "acme.com").status_code == 200
    SsoProvider.objects.update(domain=TOO_MANY)  # a row written before the limit existed
    response = client.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_DOMAIN"
    assert dns_server.queries == []


def test_a_record_name_past_253_characters_is_400_before_any_lookup(sign_in, dns_server):
    client = sign_in()
    provider_id = "p" * 50  # _auth-token-ppp... is a 62-character label
    domain = "a." * 96 + "acme.com"  # 200 characters: valid alone, 263 under the record label
    assert register(client, domain, provider_id).status_code == 200
    response = client.api_post("/sso/verify-domain", {"providerId": provider_id})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_DOMAIN"
    assert dns_server.queries == []


def test_all_lookups_of_a_request_share_one_deadline(sign_in, slow_dns, configure_sso):
    dns, resolver = slow_dns
    client = sign_in()
    token = register(client, "a.acme.com, b.acme.com").json()["domainVerificationToken"]
    dns.txt("_auth-token-acme.a.acme.com", token)
    dns.txt("_auth-token-acme.b.acme.com", token)
    resolver.slow["_auth-token-acme.b.acme.com"] = 1.5
    configure_sso(domain_verification={"dns_timeout": 0.3})
    response = client.api_post("/sso/verify-domain", {"providerId": "acme"})
    assert response.status_code == 502
    assert "b.acme.com" in error_of(response)["message"]
    assert SsoProvider.objects.get().domain_verified is False
