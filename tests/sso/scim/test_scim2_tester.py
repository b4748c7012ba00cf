"""python-scim's scim2-tester against the live server on loopback: every check passes, except those of
features ServiceProviderConfig says are unsupported (the tester skips them itself)."""

import pytest
from httpx2 import Client
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

pytestmark = pytest.mark.django_db(transaction=True)

FAILED = {Status.ERROR, Status.CRITICAL, Status.DEVIATION}


@pytest.fixture
def tester_client(live_server, configure, provider_factory):
    from sso.scim import tokens

    # The tester makes up users of any domain (example.com, ...): a provider trusted for every address.
    provider = provider_factory(verified=False)
    configure(base_url=live_server.url)
    _, token = tokens.issue(provider)
    http = Client(base_url=f"{live_server.url}/api/auth/scim/v2", headers={"Authorization": f"Bearer {token}"},
                  timeout=30)
    yield SyncSCIMClient(http)
    http.close()


def test_every_scim2_tester_check_passes(tester_client, configure_sso):
    configure_sso(domain_verification={"enabled": False})
    results = check_server(tester_client)
    failures = [f"{r.title}: {r.reason} {r.data if r.data else ''}"[:600] for r in results if r.status in FAILED]
    assert results
    assert not failures, "\n".join(failures)
