"""Fixtures and helpers shared by the social sign-in tests (imported by tests/test_social_*.py)."""

from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from authservice.models import Account, Session
from tests.peers import keys
from tests.peers.stub_server import StubServer

CLIENT_ID = "corp-client"
CLIENT_SECRET = "corp-secret"


@pytest.fixture(scope="session")
def _stub_server():
    server = StubServer()
    yield server
    server.close()


@pytest.fixture
def stub(_stub_server):
    """A local HTTP stub, emptied for each test; the JWKS/discovery caches start empty too."""
    _stub_server.reset()
    cache.clear()
    yield _stub_server
    _stub_server.reset()
    cache.clear()


def query_of(url):
    return {key: values[-1] for key, values in parse_qs(urlsplit(url).query).items()}


@pytest.fixture
def corp(stub, configure):
    """A generic OIDC entry ``corp`` whose issuer is the stub; ``corp.token_claims`` shapes the ID token."""
    op = SimpleNamespace(issuer=stub.url, key=keys.RsaKey("key-1"), token_claims=None, id_token=None,
                         token_extra={}, userinfo=None)
    op.jwks = [op.key.jwk()]
    stub.routes[("GET", "/.well-known/openid-configuration")] = (200, {
        "issuer": stub.url, "authorization_endpoint": f"{stub.url}/authorize",
        "token_endpoint": f"{stub.url}/token", "userinfo_endpoint": f"{stub.url}/userinfo",
        "jwks_uri": f"{stub.url}/jwks", "id_token_signing_alg_values_supported": ["RS256", "ES256"],
    })
    stub.routes[("GET", "/jwks")] = lambda seen: (200, {"keys": op.jwks})

    def token(seen):
        id_token = op.id_token or op.key.sign(op.token_claims or op.claims(None))
        return 200, {"access_token": "access-1", "token_type": "Bearer", "expires_in": 3600,
                     "refresh_token": "refresh-1", "scope": "openid email profile", "id_token": id_token,
                     **op.token_extra}

    stub.routes[("POST", "/token")] = token
    stub.routes[("GET", "/userinfo")] = lambda seen: (200, op.userinfo) if op.userinfo else (401, {})

    def claims(nonce, **extra):
        extra.setdefault("email", "ada@example.com")
        extra.setdefault("email_verified", True)
        extra.setdefault("name", "Ada Lovelace")
        return keys.claims(stub.url, CLIENT_ID, nonce=nonce, **extra)

    op.claims = claims
    configure(trusted_origins=[stub.url], social_providers={"corp": {
        "type": "oidc", "issuer": stub.url, "clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET}})
    return op


def start(api, provider="corp", **body):
    """POST /sign-in/social; returns (response, authorize-URL query)."""
    response = api.api_post("/sign-in/social", {"provider": provider, **body})
    assert response.status_code == 200, response.content
    return response, query_of(response.json()["url"])


def callback(api, provider="corp", **params):
    return api.api_get(f"/callback/{provider}", params)


def error_location(response):
    assert response.status_code == 302, response.content
    return response["Location"]


def nothing_created():
    """No user, no session and no social account exist."""
    return (get_user_model().objects.count() == 0 and Session.objects.count() == 0
            and not Account.objects.exclude(provider_id="credential").exists())


def sign_in_with_corp(api, corp, **claims):
    """The whole redirect flow against the stub; returns the callback response."""
    _, query = start(api, callbackURL="/dashboard")
    corp.token_claims = corp.claims(query["nonce"], **claims)
    return callback(api, code="code-1", state=query["state"])
