"""I8: every server-side fetch of a URL a user gave goes through one guarded client.

It resolves the name once, checks every address (IPv4-mapped and IPv4-compatible IPv6 included),
connects to the checked address, and follows no redirect it did not check. The attacks: an address
spelt so that it looks public (``::7f00:1``), a name whose DNS answers a public address to the check and
loopback to the connection (rebinding), and a redirect to an internal address.

Real loopback servers answer; only DNS is faked (:class:`RebindingDns` replaces the system resolver for
the ``.test`` names below and passes every other lookup through).
"""

import contextlib
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from authservice.errors import APIError
from authservice.models import Account, Session
import sso
from sso import discovery
from sso.saml import metadata_fetch
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures (stub_idp, make_provider)
from tests.sso.conftest_oidc import authorize_params
from tests.sso.saml.test_metadata_fetch import MetadataServer, keys, metadata  # noqa: F401 - keys is a fixture

pytestmark = pytest.mark.django_db

# A globally routable address: what the attacker's DNS answers while the name is being checked.
PUBLIC = "93.184.215.14"
# Spellings of loopback, "this host", CGNAT and the cloud metadata service that must never be reached.
PRIVATE_HOSTS = ["[::7f00:1]", "[::127.0.0.1]", "[::ffff:127.0.0.1]", "0.0.0.0", "100.64.0.1",
                 "169.254.169.254", "[::1]", "[::ffff:169.254.169.254]", "[2002:7f00:1::]"]


class RebindingDns:
    """The system resolver, except for names in ``answers``: each lookup takes the next answer list
    (the last one repeats), so the first lookup can see a public address and later ones loopback."""

    def __init__(self, monkeypatch):
        self.answers = {}
        self.lookups = []
        self._real = socket.getaddrinfo
        monkeypatch.setattr(socket, "getaddrinfo", self.getaddrinfo)

    def getaddrinfo(self, host, port, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name not in self.answers:
            return self._real(host, port, *args, **kwargs)
        self.lookups.append(name)
        sequence = self.answers[name]
        addresses = sequence[min(len(self.lookups_of(name)) - 1, len(sequence) - 1)]
        port = int(port or 0)
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)) if ":" in address
                else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)) for address in addresses]

    def lookups_of(self, name):
        return [seen for seen in self.lookups if seen == name]


@pytest.fixture
def dns(monkeypatch, configure_sso):  # noqa: F811 - configure_sso is the imported fixture
    configure_sso(discovery_timeout=0.5)  # the public answer may be unreachable: fail fast
    return RebindingDns(monkeypatch)


@pytest.fixture
def loopback():
    server = MetadataServer()
    yield server
    server.close()


def refused_with(call, code):
    with pytest.raises(APIError) as caught:
        call()
    assert caught.value.code == code, caught.value
    return caught.value


# --- addresses that only look public -------------------------------------------------------------
@pytest.mark.parametrize("host", PRIVATE_HOSTS)
def test_saml_metadata_from_an_internal_address_is_refused(host, loopback):
    refused_with(lambda: metadata_fetch.fetch_metadata(f"https://{host}:{loopback.port}/md"),
                 "SAML_METADATA_URL_PRIVATE_HOST")
    assert loopback.hits == []


@pytest.mark.parametrize("host", PRIVATE_HOSTS)
def test_an_oidc_endpoint_at_an_internal_address_is_refused(host, loopback):
    refused_with(lambda: discovery.request("GET", f"http://{host}:{loopback.port}/jwks", name="jwksEndpoint"),
                 "discovery_private_host")
    assert loopback.hits == []


@pytest.mark.parametrize("address", ["::7f00:1", "::ffff:127.0.0.1", "100.64.0.1", "169.254.169.254"])
def test_an_oidc_endpoint_whose_name_resolves_to_an_internal_address_is_refused(address, dns, loopback):
    dns.answers["idp.attacker.test"] = [[address]]
    refused_with(lambda: discovery.request("GET", f"http://idp.attacker.test:{loopback.port}/jwks",
                                           name="jwksEndpoint"), "discovery_private_host")
    assert loopback.hits == []


def test_one_internal_answer_among_public_ones_is_refused(dns, loopback):
    dns.answers["idp.attacker.test"] = [[PUBLIC, "::7f00:1"]]
    refused_with(lambda: metadata_fetch.fetch_metadata(f"https://idp.attacker.test:{loopback.port}/md"),
                 "SAML_METADATA_URL_PRIVATE_HOST")


# --- DNS rebinding: the checked answer is the one connected to ------------------------------------
def test_an_oidc_endpoint_is_resolved_once_and_never_reached_through_a_second_answer(dns, loopback):
    dns.answers["rebind.attacker.test"] = [[PUBLIC], ["127.0.0.1"]]
    loopback.set("/jwks", b'{"keys": []}')
    with pytest.raises(Exception):  # noqa: B017, PT011 - the public address does not answer: any failure
        discovery.request("GET", f"http://rebind.attacker.test:{loopback.port}/jwks", name="jwksEndpoint")
    assert loopback.hits == []
    assert dns.lookups == ["rebind.attacker.test"]


def test_saml_metadata_is_resolved_once_and_never_reached_through_a_second_answer(dns, loopback):
    dns.answers["rebind.attacker.test"] = [[PUBLIC], ["127.0.0.1"]]
    refused_with(lambda: metadata_fetch.fetch_metadata(f"https://rebind.attacker.test:{loopback.port}/md"),
                 "SAML_METADATA_FETCH_FAILED")
    assert loopback.hits == []
    assert dns.lookups == ["rebind.attacker.test"]


def test_a_jwks_endpoint_that_rebinds_to_loopback_cannot_sign_anyone_in(api, stub_idp, make_provider, dns):
    # The token endpoint is the trusted stub; the JWKS URL names the attacker's host, which answers the
    # check with a public address and the fetch with the loopback stub that serves matching keys.
    port = stub_idp.url.rsplit(":", 1)[1]
    dns.answers["keys.attacker.test"] = [[PUBLIC], ["127.0.0.1"]]
    make_provider("stub", stub_idp.issuer, stub_idp.oidc_config(jwksEndpoint=f"http://keys.attacker.test:{port}/jwks"))
    response = api.api_post("/sign-in/sso", {"providerId": "stub", "callbackURL": "/dashboard",
                                             "errorCallbackURL": "/oops"})
    params = authorize_params(response.json()["url"])
    stub_idp.id_token = stub_idp.sign(stub_idp.claims(params["nonce"]))
    finished = api.get("/api/auth/sso/callback/stub", {"code": "stub-code", "state": params["state"]})
    assert finished.status_code == 302 and finished["Location"].startswith("/oops?")
    assert "/jwks" not in stub_idp.hits
    assert not Account.objects.filter(provider_id="stub").exists()
    assert not Session.objects.exists()


# --- redirects -----------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["[::7f00:1]", "[::ffff:127.0.0.1]", "169.254.169.254", "100.64.0.1"])
def test_a_metadata_redirect_to_an_internal_address_is_refused(host, keys, configure):  # noqa: F811
    origin, target = MetadataServer(), MetadataServer()
    try:
        configure(trusted_origins=[origin.url])
        target.set("/md", metadata(keys, "old"))
        origin.redirect("/md", f"https://{host}:{target.port}/md")
        refused_with(lambda: metadata_fetch.fetch_metadata(f"{origin.url}/md"), "SAML_METADATA_URL_PRIVATE_HOST")
        assert target.hits == []
    finally:
        origin.close()
        target.close()


def test_a_metadata_redirect_to_a_rebinding_name_is_checked_and_pinned_like_the_first_hop(keys, configure, dns):
    origin, target = MetadataServer(), MetadataServer()
    try:
        configure(trusted_origins=[origin.url])
        dns.answers["rebind.attacker.test"] = [[PUBLIC], ["127.0.0.1"]]
        target.set("/md", metadata(keys, "old"))
        origin.redirect("/md", f"https://rebind.attacker.test:{target.port}/md")
        refused_with(lambda: metadata_fetch.fetch_metadata(f"{origin.url}/md"), "SAML_METADATA_FETCH_FAILED")
        assert target.hits == []
        assert dns.lookups == ["rebind.attacker.test"]
    finally:
        origin.close()
        target.close()


def test_an_oidc_endpoint_redirect_is_not_followed(loopback, configure):
    target = MetadataServer()
    try:
        configure(trusted_origins=[loopback.url])
        loopback.redirect("/token", f"http://169.254.169.254:{target.port}/latest/meta-data")
        refused_with(lambda: discovery.request("GET", f"{loopback.url}/token", name="tokenEndpoint"),
                     "oidc_endpoint_redirect")
        assert target.hits == []
    finally:
        target.close()


# --- bounded time --------------------------------------------------------------------------------
def drip(wfile, count=40, pause=0.1):
    """One byte per ``pause``: every read returns within the read timeout, the whole takes 4 s."""
    for _ in range(count):
        wfile.write(b" ")
        time.sleep(pause)


def test_a_metadata_body_dripped_slowly_is_abandoned_at_the_deadline(loopback, configure, configure_sso):  # noqa: F811
    configure(trusted_origins=[loopback.url])
    configure_sso(discovery_timeout=0.3)
    loopback.set("/md", drip)
    started = time.monotonic()
    refused_with(lambda: metadata_fetch.fetch_metadata(f"{loopback.url}/md"), "SAML_METADATA_FETCH_FAILED")
    assert time.monotonic() - started < 2


def test_an_oidc_answer_dripped_slowly_is_abandoned_at_the_deadline(loopback, configure, configure_sso):  # noqa: F811
    configure(trusted_origins=[loopback.url])
    configure_sso(discovery_timeout=0.3)
    loopback.set("/jwks", drip)
    started = time.monotonic()
    with pytest.raises(Exception):  # noqa: B017, PT011 - a timeout, whichever class reports it
        discovery.request("GET", f"{loopback.url}/jwks", name="jwksEndpoint")
    assert time.monotonic() - started < 2


class HeaderDripServer:
    """A raw TCP server that answers a status line, then drips a header one byte per 0.1 s for 4 s."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                threading.Thread(target=self._answer, args=(client,), daemon=True).start()

    @staticmethod
    def _answer(client):
        with client, contextlib.suppress(OSError):
            client.recv(65536)
            client.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            for _ in range(40):
                client.sendall(b"x")
                time.sleep(0.1)

    def close(self):
        self.listener.close()


@pytest.fixture
def header_drip(configure, configure_sso):  # noqa: F811
    server = HeaderDripServer()
    configure(trusted_origins=[server.url])
    configure_sso(discovery_timeout=0.3)
    yield server
    server.close()


def test_metadata_headers_dripped_slowly_are_abandoned_at_the_deadline(header_drip):
    started = time.monotonic()
    refused_with(lambda: metadata_fetch.fetch_metadata(f"{header_drip.url}/md"), "SAML_METADATA_FETCH_FAILED")
    assert time.monotonic() - started < 2


def test_oidc_headers_dripped_slowly_are_abandoned_at_the_deadline(header_drip):
    started = time.monotonic()
    with pytest.raises(Exception):  # noqa: B017, PT011 - a timeout, whichever class reports it
        discovery.request("GET", f"{header_drip.url}/token", name="tokenEndpoint")
    assert time.monotonic() - started < 2


# --- one client ----------------------------------------------------------------------------------
SECOND_CLIENTS = re.compile(r"^\s*(import requests|from requests\b|import urllib\.request|from urllib\.request|"
                            r"import httpx|from httpx|import urllib3|from urllib3)|PyJWKClient", re.MULTILINE)


def test_the_sso_code_fetches_through_no_other_http_client():
    # mozilla-django-oidc's own fetching methods (get_token, retrieve_matching_jwk, get_userinfo) are
    # overridden in sso/oidc/verification.py; a direct import of a client here would be a second path.
    root = Path(sso.__file__).parent
    offenders = sorted(str(path.relative_to(root)) for path in root.rglob("*.py")
                       if SECOND_CLIENTS.search(path.read_text()))
    assert offenders == []
