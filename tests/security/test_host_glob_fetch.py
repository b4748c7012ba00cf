"""I8: a host-only trusted-origin glob (``*.example.com``) does not exempt server-side fetches from the
private-address check (second attack pass on issue 12).

The glob is meant for browsers' origins (redirects, the Origin check). ``authservice.fetch`` asked the
same question (``is_trusted_origin``), and a host-only glob matches any scheme and port of any name
under it: any signed-in user could make the server fetch ``http://<anything>.example.com:<port>/``
resolving to loopback or RFC 1918, through ``samlConfig.idpMetadata.url`` or an OIDC endpoint, and read
the error as a port scanner. Only an exact configured origin (scheme, host, port) may reach a
private address now (``origins.is_exact_trusted_origin``).
"""

import pytest

from authservice.errors import APIError
from sso.saml import metadata_fetch
from tests.security.test_server_side_fetch import RebindingDns
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.saml.test_metadata_fetch import MetadataServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def loopback():
    server = MetadataServer()
    yield server
    server.close()


def test_a_host_glob_does_not_open_internal_ports_to_server_side_fetches(configure, configure_sso,
                                                                          monkeypatch, loopback):
    configure(trusted_origins=["*.example.com"])
    configure_sso(discovery_timeout=0.5)
    dns = RebindingDns(monkeypatch)
    dns.answers["redis.internal.example.com"] = [["127.0.0.1"]]
    loopback.set("/md", b"<not-metadata/>")
    with pytest.raises(APIError) as caught:
        metadata_fetch.fetch_metadata(f"http://redis.internal.example.com:{loopback.port}/md")
    # Secure: refused as a private host before any connection.
    assert caught.value.code in ("SAML_METADATA_URL_PRIVATE_HOST", "SAML_METADATA_URL_INVALID"), caught.value
    assert loopback.hits == []


def test_through_the_api_an_ordinary_account_reaches_the_internal_port(configure, configure_sso, monkeypatch,
                                                                        loopback, make_user):
    from tests.conftest import PASSWORD, ApiClient
    configure(trusted_origins=["*.example.com"])
    configure_sso(discovery_timeout=0.5)
    dns = RebindingDns(monkeypatch)
    dns.answers["admin.internal.example.com"] = [["127.0.0.1"]]
    make_user(email="mallory@evil.test")
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": "mallory@evil.test", "password": PASSWORD}).status_code == 200
    response = client.api_post("/sso/register", {
        "providerId": "probe", "issuer": "https://sp.evil.test", "domain": "evil.test",
        "samlConfig": {"entryPoint": "https://idp.evil.test/sso",
                       "idpMetadata": {"url": f"http://admin.internal.example.com:{loopback.port}/secret"}}})
    # Secure: refused as a private host, nothing reached. Now: the loopback server is hit and the answer
    # ("HTTP 404" vs "Invalid IdP metadata" vs a connection error) is an internal port/path oracle.
    assert loopback.hits == [], (loopback.hits, response.content)


def test_a_host_written_out_with_any_port_may_still_be_private(configure):
    """A deployment that trusts ``http://127.0.0.1:*`` named that host itself (a local IdP)."""
    from authservice import origins

    configure(trusted_origins=["http://127.0.0.1:*", "*.example.com", "https://*.corp.test"])
    assert origins.is_exact_trusted_origin("http://127.0.0.1:45629/token")
    assert not origins.is_exact_trusted_origin("https://127.0.0.1:45629/token")
    assert not origins.is_exact_trusted_origin("http://redis.internal.example.com:6379/")
    assert not origins.is_exact_trusted_origin("https://admin.corp.test/")
