"""Fixtures for the SSO tests: real peers on loopback (an HTTP "IdP" for discovery, a DNS server).

Nothing of ours is mocked: discovery goes through ``requests`` to a real socket, TXT lookups through
dnspython to a real UDP server written with dnslib.
"""

import json
import time
from http.server import BaseHTTPRequestHandler

import pytest
from django.test import Client
from dnslib import QTYPE, RR, TXT
from dnslib.server import BaseResolver, DNSServer

from tests.conftest import PASSWORD, ApiClient, _deep_merge
from tests.peers.stub_server import LoopbackServer


@pytest.fixture(autouse=True)
def _sso_defaults(settings):
    """The example project's SSO settings, with short timeouts and no system DNS."""
    settings.AUTHSERVICE_SSO = _deep_merge(getattr(settings, "AUTHSERVICE_SSO", {}), {
        "domain_verification": {"enabled": True},
        "organization": {"enabled": True},
        "providers_limit": 10,
        "discovery_timeout": 2,
        "dns_nameservers": ["127.0.0.1:9"],  # nothing listens: a test that forgets the DNS fixture fails
    })


@pytest.fixture
def configure_sso(settings):
    def apply(**overrides):
        settings.AUTHSERVICE_SSO = _deep_merge(settings.AUTHSERVICE_SSO, overrides)

    return apply


# --- a loopback IdP ------------------------------------------------------------------------------
class FakeIdP(LoopbackServer):
    """Serves configurable answers; ``requests`` lists every path asked for."""

    def __init__(self):
        self.routes = {}
        self.requests = []
        self.serve(self._handler())

    def set(self, path, body=None, status=200, delay=0.0, headers=None, raw=None):
        self.routes[path] = (status, body, delay, headers or {}, raw)

    def discovery(self, issuer=None, **changes):
        """Serve a complete discovery document for this issuer, with ``changes`` applied."""
        issuer = issuer or self.url
        document = {
            "issuer": issuer,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks",
            "userinfo_endpoint": f"{self.url}/userinfo",
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        }
        for key, value in changes.items():
            if value is None:
                document.pop(key, None)
            else:
                document[key] = value
        self.set("/.well-known/openid-configuration", document)
        return document

    def _handler(self):
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                idp.requests.append(self.path)
                status, body, delay, headers, raw = idp.routes.get(self.path, (404, {"error": "nf"}, 0, {}, None))
                if delay:
                    time.sleep(delay)
                payload = raw if raw is not None else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        return Handler


@pytest.fixture
def idp(configure):
    """A loopback IdP whose origin is trusted (discovery requires it)."""
    server = FakeIdP()
    configure(trusted_origins=[server.url])
    yield server
    server.close()


@pytest.fixture
def untrusted_idp():
    server = FakeIdP()
    yield server
    server.close()


# --- a loopback DNS server -----------------------------------------------------------------------
class TxtResolver(BaseResolver):
    def __init__(self):
        self.records = {}  # name (no trailing dot, lower case) -> [str or [chunks]]
        self.queries = []

    def resolve(self, request, handler):
        reply = request.reply()
        name = str(request.q.qname).rstrip(".").lower()
        self.queries.append(name)
        if name not in self.records:
            reply.header.rcode = 3  # NXDOMAIN
            return reply
        if request.q.qtype == QTYPE.TXT:
            for value in self.records[name]:
                reply.add_answer(RR(request.q.qname, QTYPE.TXT, rdata=TXT(value), ttl=0))
        return reply


class DnsFixture:
    def __init__(self, resolver, port):
        self.resolver = resolver
        self.port = port

    def txt(self, name, *values):
        self.resolver.records[name.lower()] = list(values)

    @property
    def queries(self):
        return self.resolver.queries


@pytest.fixture
def dns_server(configure_sso):
    """A DNS server on a loopback UDP port; the service's nameserver setting points at it."""
    resolver = TxtResolver()
    server = DNSServer(resolver, port=0, address="127.0.0.1")
    server.start_thread()
    port = server.server.server_address[1]
    configure_sso(dns_nameservers=[f"127.0.0.1:{port}"])
    yield DnsFixture(resolver, port)
    server.stop()


# --- users and clients ---------------------------------------------------------------------------
@pytest.fixture
def sign_in(make_user):
    """``sign_in(email)``: a fresh ApiClient holding a session of a new user."""

    def create(email="owner@acme.com", **extra):
        user = make_user(email=email, **extra)
        client = ApiClient()
        response = client.api_post("/sign-in/email", {"email": email, "password": PASSWORD})
        assert response.status_code == 200, response.content
        client.user = user
        return client

    return create


@pytest.fixture(scope="session")
def pem_cert():
    """A self-signed RSA certificate in PEM, as an IdP console exports it."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "idp.acme.com")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1)
            .not_valid_before(datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc))
            .not_valid_after(datetime.datetime(2034, 12, 31, 14, 34, 47, tzinfo=datetime.timezone.utc))
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


@pytest.fixture
def admin_client(make_user):
    """A Django test client signed in to the admin as a superuser (the sso admin tests)."""
    make_user(email="root@acme.com", is_staff=True, is_superuser=True)
    client = Client()
    assert client.login(email="root@acme.com", password=PASSWORD)
    return client
