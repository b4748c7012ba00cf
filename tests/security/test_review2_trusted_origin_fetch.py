"""I8: the trusted-origin exemption of the guarded client is no wider than the origin written.

The guarded client (authservice/fetch.py) skips the public-address check for URLs in a trusted
origin (a deployment may run its IdP on a private network). The attacker, an ordinary account,
names an IdP metadata URL or an OIDC endpoint on an internal host that happens to share the trusted
origin's name, but with another port or scheme, to reach an internal service:

- an exact trusted origin ``http://idp.corp.test:<port>`` does not exempt the same host on another
  port, nor the https form of it on another port;
- a scheme-and-host glob ``https://*.corp.test`` does not exempt ``http://`` nor a non-default port.

Each refused URL resolves to loopback, where a real server counts the hits: none may arrive.
(A host-only glob, ``*.corp.test``, is reported separately: it currently exempts every port.)
"""

import pytest

from authservice.errors import APIError
from sso import discovery
from sso.saml import metadata_fetch
from tests.security.test_server_side_fetch import RebindingDns
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.saml.test_metadata_fetch import MetadataServer

pytestmark = pytest.mark.django_db

HOST = "idp.corp.test"


@pytest.fixture
def loopback():
    server = MetadataServer()
    yield server
    server.close()


@pytest.fixture
def dns(monkeypatch, configure_sso):  # noqa: F811 - the imported fixture
    configure_sso(discovery_timeout=0.5)
    resolver = RebindingDns(monkeypatch)
    resolver.answers[HOST] = [["127.0.0.1"]]
    return resolver


def _refused(call, codes):
    with pytest.raises(APIError) as caught:
        call()
    assert caught.value.code in codes, caught.value


def test_an_exact_trusted_origin_does_not_exempt_other_ports(configure, dns, loopback):
    configure(trusted_origins=[f"http://{HOST}:1"])
    for url in (f"http://{HOST}:{loopback.port}/md", f"https://{HOST}:{loopback.port}/md"):
        _refused(lambda url=url: metadata_fetch.fetch_metadata(url),
                 ("SAML_METADATA_URL_PRIVATE_HOST", "SAML_METADATA_URL_INVALID"))
        _refused(lambda url=url: discovery.request("GET", url.replace("/md", "/jwks"), name="jwksEndpoint"),
                 ("discovery_private_host", "discovery_invalid_url", "discovery_untrusted_origin"))
    assert loopback.hits == []
    # Control: the exact origin itself is exempt (so the refusals above are the port, not the setup).
    configure(trusted_origins=[f"http://{HOST}:{loopback.port}"])
    loopback.set("/md", b"<x/>")
    _refused(lambda: metadata_fetch.fetch_metadata(f"http://{HOST}:{loopback.port}/md"),
             ("SAML_INVALID_IDP_METADATA",))
    assert loopback.hits == ["/md"]


def test_a_scheme_glob_does_not_exempt_plain_http_or_other_ports(configure, dns, loopback):
    configure(trusted_origins=["https://*.corp.test"])
    for url in (f"http://{HOST}:{loopback.port}/md", f"https://{HOST}:{loopback.port}/md",
                f"http://{HOST}/md"):
        _refused(lambda url=url: metadata_fetch.fetch_metadata(url),
                 ("SAML_METADATA_URL_PRIVATE_HOST", "SAML_METADATA_URL_INVALID"))
    assert loopback.hits == []
