"""I8: a glob in ``trustedOrigins`` does not exempt an OIDC endpoint from the private-host rule.

``sso.discovery.check_endpoint`` (every explicitly given endpoint, at registration and before each
fetch) asked the glob question (``origins.is_trusted_origin``) where the guarded client asks the exact
one: with ``https://*.corp.internal`` trusted for browsers, an ordinary account registered a provider
whose token endpoint was ``https://vault.corp.internal/token``, a host of the server's own network
chosen by the attacker. The client then refused to connect, but the registration stored it, and the
two checks answered differently for the same URL. Now both ask ``fetch.may_reach_private``: only an
origin written out in full may be private. Globs still bound discovery (sso.md §4): they narrow where an
IdP may be, and open nothing.
"""

import pytest

from authservice import fetch
from sso import discovery
from sso.models import SsoProvider
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, sign_in  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db
INTERNAL = "https://vault.corp.internal/token"


@pytest.fixture
def corp_glob(configure):
    configure(trusted_origins=["https://*.corp.internal"])


def test_registering_an_endpoint_on_a_private_host_under_a_trusted_glob_is_refused(corp_glob, sign_in):  # noqa: F811
    response = sign_in().api_post("/sso/register", skip_discovery_body(oidc={"tokenEndpoint": INTERNAL}))
    assert (response.status_code, error_of(response)["code"]) == (400, "discovery_private_host")
    assert not SsoProvider.objects.exists()


def test_the_endpoint_check_and_the_client_agree_under_a_glob(corp_glob):
    assert not fetch.may_reach_private(INTERNAL)
    with pytest.raises(discovery.DiscoveryError) as refused:
        discovery.check_endpoint("tokenEndpoint", INTERNAL)
    assert refused.value.code == "discovery_private_host"


def test_an_origin_written_out_in_full_may_still_be_private(configure):
    configure(trusted_origins=["https://vault.corp.internal"])
    assert fetch.may_reach_private(INTERNAL)
    assert discovery.check_endpoint("tokenEndpoint", INTERNAL) == INTERNAL


def test_a_glob_still_bounds_where_discovered_endpoints_may_be(corp_glob):
    issuer = "https://idp.corp.internal"
    assert discovery.normalize_endpoints({"token_endpoint": f"{issuer}/token"}, issuer) == {
        "token_endpoint": f"{issuer}/token"}
    with pytest.raises(discovery.DiscoveryError) as refused:
        discovery.normalize_endpoints({"token_endpoint": "https://idp.evil.test/token"}, issuer)
    assert refused.value.code == "discovery_untrusted_origin"
