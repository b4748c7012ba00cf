"""Two gunicorn processes sharing one database, spoken to over real HTTP (issue 8 §3).

``pair`` is parametrized: ``redis`` (``REDIS_URL`` set, so rate limits count in Redis) and ``database``
(no Redis, so they count in the database). Both servers run the example project with one sync worker each,
the same ``SECRET_KEY`` and database; A's origin is ``AUTH_BASE_URL`` and B's is in ``AUTH_TRUSTED_ORIGINS``.
Mail goes to files (``EMAIL_URL=filemail://``) that ``pair.mail_to(address)`` reads back.

The database: on PostgreSQL (``DATABASE_URL`` set to postgres in the test run's environment) a separate
database ``<suite database>_multiproc``, recreated and migrated for each variant; otherwise a SQLite file in a
temporary directory.

The rate limiter is on, as in production. Each ``pair.client()`` connects from its own loopback address
(127.0.0.0/8 is all loopback on Linux), so every client has its own counters, exactly as two people would,
and no test's requests eat into another's limit. A new shared-state behaviour (an SSO state, a SAML
assertion) is one more test: make a client, act on ``pair.a``, check on ``pair.b``.

A module that needs the servers configured differently parametrizes ``pair`` indirectly with
:class:`PairOptions` (the variant plus extra environment); plain ``pair`` is unchanged.
"""

import itertools
import os
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from pathlib import Path

import pytest
import requests
from requests.adapters import HTTPAdapter

from tests.peers.gunicorn import (  # noqa: F401 - ROOT: for the test modules
    ROOT, GunicornServer, admin_connection, drop_postgres_database, free_port, migrate, postgres_url,
    recreate_postgres_database, suite_database)

DATABASE = suite_database("multiproc")
REDIS_URL = "redis://127.0.0.1:6379/13"
PASSWORD = "correct horse battery"


def fresh_database(workdir):
    """A new, empty database URL for the servers (migrated by the caller)."""
    if postgres_url() is None:
        return f"sqlite:///{workdir / 'shared.sqlite3'}"
    return recreate_postgres_database(DATABASE)


def redis_available():
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _redis(*commands):
    """Send ``commands`` to Redis db 13; the raw replies."""
    with socket.create_connection(("127.0.0.1", 6379), timeout=2) as sock:
        sock.sendall(b"SELECT 13\r\n" + b"".join(c.encode() + b"\r\n" for c in commands))
        received = b""
        while not received.endswith(b"\r\n") or received.count(b"\r\n") <= len(commands):
            received += sock.recv(65536)
        return received


def flush_redis_db():
    received = _redis("FLUSHDB")
    assert received == b"+OK\r\n+OK\r\n", received


# --- a client with its own address ----------------------------------------------------------------
_addresses = (f"127.{b}.{c}.{d}" for b in range(10, 250) for c in range(256) for d in range(1, 255))


class _SourceAddressAdapter(HTTPAdapter):
    def __init__(self, source_address):
        self.source_address = source_address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.source_address, 0)
        super().init_poolmanager(*args, **kwargs)


class Client(requests.Session):
    """A browser-like JSON client: one cookie jar for both servers (cookies ignore ports), its own IP."""

    def __init__(self, address):
        super().__init__()
        self.address = address
        self.trust_env = False  # no proxy from the environment between us and the servers
        self.mount("http://", _SourceAddressAdapter(address))

    def call(self, server, method, path, body=None, **kwargs):
        headers = {"Origin": server.origin, **kwargs.pop("headers", {})}
        kwargs.setdefault("timeout", 30)
        return self.request(method, server.base + path, json=body, headers=headers, **kwargs)

    def api_post(self, server, path, body=None, **kwargs):
        return self.call(server, "POST", path, body, **kwargs)

    def api_get(self, server, path, **kwargs):
        return self.call(server, "GET", path, **kwargs)

    def sign_up(self, server, email, password=PASSWORD, name="Ada"):
        response = self.api_post(server, "/sign-up/email", {"name": name, "email": email, "password": password})
        assert response.status_code == 200, response.text
        return response.json()

    def sign_in(self, server, email, password=PASSWORD):
        response = self.api_post(server, "/sign-in/email", {"email": email, "password": password})
        assert response.status_code == 200, response.text
        return response.json()

    def session_of(self, server):
        """``get-session``'s body on ``server``: the session, or ``None`` when there is none."""
        response = self.api_get(server, "/get-session")
        assert response.status_code == 200, response.text
        return response.json()


# --- the pair -------------------------------------------------------------------------------------
@dataclass
class Pair:
    variant: str
    database_url: str
    mail_dir: Path
    a: GunicornServer
    b: GunicornServer
    _emails: itertools.count = field(default_factory=itertools.count)

    @property
    def servers(self):
        return (self.a, self.b)

    def client(self):
        return Client(next(_addresses))

    def email(self, label="user"):
        return f"{label}-{self.variant}-{next(self._emails)}-{time.time_ns()}@example.com"

    def mail_to(self, address):
        """The messages sent to ``address`` so far, oldest first, by either server."""
        found = []
        for path in sorted(self.mail_dir.glob("*.log"), key=lambda p: p.stat().st_mtime_ns):
            # The file backend appends each message followed by a line of 79 dashes.
            for chunk in path.read_bytes().split(b"\n" + b"-" * 79 + b"\n"):
                if chunk.strip():
                    message = message_from_bytes(chunk.lstrip(), policy=policy.default)
                    if message["To"] == address:
                        found.append(message)
        return found

    def stored_counters(self):
        """How many rate-limit counters the variant's store holds: Redis keys, or database rows."""
        if self.variant == "redis":
            return int(_redis("EVAL \"return #redis.call('KEYS', '*authservice:rl:*')\" 0").split(b":")[-1])
        query = "SELECT count(*) FROM authservice_ratelimitcounter"
        if postgres_url() is None:
            with sqlite3.connect(self.database_url.removeprefix("sqlite:///")) as connection:
                return connection.execute(query).fetchone()[0]
        with admin_connection(DATABASE) as connection:
            return connection.execute(query).fetchone()[0]

    def server_errors(self):
        return [s.name for s in self.servers if "Internal Server Error" in s.log() or "Traceback" in s.log()]


@dataclass(frozen=True)
class PairOptions:
    """An optional ``pair`` parameter, for ``@pytest.mark.parametrize("pair", [...], indirect=True)``.

    ``env``: ``(name, value)`` pairs added to both servers' environment (``AUTH_SSO_SAML_ALLOW_IDP_INITIATED``);
    ``trusted_origins``: entries added to ``AUTH_TRUSTED_ORIGINS`` after B's origin. Hashable, so pytest
    reuses one pair for every test with equal options and starts a new one when they differ.
    """

    variant: str
    env: tuple = ()
    trusted_origins: tuple = ()


def _server_env(variant, database_url, mail_dir, origin_a, origin_b, options=None):
    options = options or PairOptions(variant)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "project.settings",
        "DATABASE_URL": database_url,
        "AUTH_BASE_URL": origin_a,
        "AUTH_TRUSTED_ORIGINS": ",".join((origin_b, *options.trusted_origins)),
        "AUTH_RATE_LIMIT": "true",
        "EMAIL_URL": f"filemail:///{mail_dir}",  # mail_dir is absolute: four slashes in all
        "DEBUG": "false",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("REDIS_URL", None)
    if variant == "redis":
        env["REDIS_URL"] = REDIS_URL
    env.update(options.env)
    return env


@pytest.fixture(scope="session", params=["redis", "database"])
def pair(request, tmp_path_factory):
    options = request.param if isinstance(request.param, PairOptions) else PairOptions(request.param)
    variant = options.variant
    if variant == "redis":
        if not redis_available():
            if os.environ.get("CI"):
                pytest.fail("Redis is not answering on 127.0.0.1:6379 (tests/install_peers.sh starts it)")
            pytest.skip("Redis is not answering on 127.0.0.1:6379")
        flush_redis_db()
    workdir = tmp_path_factory.mktemp(f"multiproc-{variant}")
    mail_dir = workdir / "mail"
    mail_dir.mkdir()
    database_url = fresh_database(workdir)
    port_a, port_b = free_port(), free_port()
    origin_a, origin_b = f"http://127.0.0.1:{port_a}", f"http://127.0.0.1:{port_b}"
    env = _server_env(variant, database_url, mail_dir, origin_a, origin_b, options)
    migrate(env)
    servers = Pair(variant, database_url, mail_dir,
                   GunicornServer("A", env, workdir / "gunicorn-A.log", port=port_a),
                   GunicornServer("B", env, workdir / "gunicorn-B.log", port=port_b))
    try:
        for server in servers.servers:
            server.start()
        for server in servers.servers:
            server.wait_ready()
        yield servers
    finally:
        for server in servers.servers:
            server.stop()
        if postgres_url() is not None:
            drop_postgres_database(DATABASE)
