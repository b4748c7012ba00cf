"""Peers for the SSO sign-in tests: a real OpenID provider and a stub token endpoint we control.

- ``oidc_op``: npm ``oidc-provider`` (OpenID Certified, tests/js/sso_oidc_provider.mjs) on a loopback
  port, with clients whose redirect URI is our ``{base}/sso/callback/{providerId}``. ``op_login`` drives
  its login and consent forms with real HTTP, like a browser, and stops at the redirect back to us.
- ``stub_idp``: a loopback ``http.server`` whose token endpoint answers whatever ID token a test signs
  with keys generated here, for the tokens a real provider never issues (bad signature, wrong
  audience, expired, ``alg: none``, HS256 keyed with the public key).

Test modules import the fixtures: ``from tests.sso.conftest_oidc import *``.
"""

import base64
import functools
import json
import re
import subprocess
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.conftest import BASE, ORIGIN
from tests.peers.node import node_or_skip
from tests.peers.stub_server import LoopbackServer

JS = Path(__file__).resolve().parent.parent / "js"
OP_SCRIPT = JS / "sso_oidc_provider.mjs"
CALLBACK = f"{ORIGIN}{BASE}/sso/callback/"
SHARED_CALLBACK = f"{ORIGIN}{BASE}/sso/callback"  # the redirect_uri setting's target
BASIC_SECRET = "basic s3cret:/+%&"  # characters that must be form-encoded in the Basic header
POST_SECRET = "post-secret-value"
OP_PROVIDER_IDS = ("acme", "acme-two", "acme-post", "acme-jwt")
# acme-jwt authenticates with private_key_jwt: the OP knows this key's public half.
JWT_CLIENT_KEY_ID = "acme-jwt-key-1"


@functools.lru_cache(maxsize=None)
def jwt_client_key():
    """The PEM private key of the acme-jwt client, made once per test run (never committed)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _client_auth(pid):
    if pid == "acme-jwt":
        public = serialization.load_pem_private_key(jwt_client_key().encode(), None).public_key()
        jwk = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(public)), "kid": JWT_CLIENT_KEY_ID, "use": "sig"}
        return {"token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [jwk]}}
    if pid == "acme-post":
        return {"client_secret": POST_SECRET, "token_endpoint_auth_method": "client_secret_post"}
    return {"client_secret": BASIC_SECRET, "token_endpoint_auth_method": "client_secret_basic"}
OP_ACCOUNTS = {
    "ada@acme.com": {"email": "Ada@Acme.com", "email_verified": True, "name": "Ada Lovelace",
                     "picture": "https://img.acme.com/ada.png", "groups": ["eng", "admins"]},
    "unverified@acme.com": {"email": "unverified@acme.com", "email_verified": False, "name": "Unverified"},
    "noemail": {"name": "No Email"},
}


def _node_or_skip():
    return node_or_skip("oidc-provider")


class OpenIDProvider:
    def __init__(self, issuer, process):
        self.issuer = issuer
        self.process = process

    def oidc_config(self, provider_id="acme", **changes):
        """A stored oidcConfig for ``provider_id`` as registration would leave it after discovery."""
        post = provider_id == "acme-post"
        config = {
            "issuer": self.issuer,
            "clientId": f"{provider_id}-client",
            "clientSecret": POST_SECRET if post else BASIC_SECRET,
            "pkce": True,
            "discoveryEndpoint": f"{self.issuer}/.well-known/openid-configuration",
            "authorizationEndpoint": f"{self.issuer}/auth",
            "tokenEndpoint": f"{self.issuer}/token",
            "jwksEndpoint": f"{self.issuer}/jwks",
            "userInfoEndpoint": f"{self.issuer}/me",
            "tokenEndpointAuthentication": "client_secret_post" if post else "client_secret_basic",
        }
        for key, value in changes.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
        return config


@pytest.fixture(scope="session")
def oidc_op():
    node = _node_or_skip()
    clients = [{
        "client_id": f"{pid}-client",
        **_client_auth(pid),
        "redirect_uris": [CALLBACK + pid, SHARED_CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    } for pid in OP_PROVIDER_IDS]
    config = json.dumps({"clients": clients, "accounts": OP_ACCOUNTS})
    process = subprocess.Popen([node, str(OP_SCRIPT), config], cwd=JS, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    if not line:
        process.kill()
        pytest.fail("oidc-provider did not start")
    yield OpenIDProvider(json.loads(line)["issuer"], process)
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def trusted_op(oidc_op, configure):
    """The OP, with its loopback origin trusted (every server-side IdP fetch requires it)."""
    configure(trusted_origins=[oidc_op.issuer])
    return oidc_op


def op_login(authorize_url, login, abort=False, callback_prefix=CALLBACK):
    """Sign in at the OP as ``login`` (and consent) with real HTTP; returns the redirect to our callback."""
    browser = requests.Session()
    browser.trust_env = False  # loopback only: never through a proxy from the environment
    response = browser.get(authorize_url, allow_redirects=False, timeout=10)
    for _ in range(12):
        if response.status_code in (302, 303):
            location = urljoin(response.url, response.headers["location"])
            if location.startswith(callback_prefix):
                return location
            response = browser.get(location, allow_redirects=False, timeout=10)
            continue
        assert response.status_code == 200, (response.status_code, response.text[:500])
        prompt = re.search(r'name="prompt" value="(\w+)"', response.text).group(1)
        action = urljoin(response.url, re.search(r'action="([^"]+)"', response.text).group(1))
        if abort:
            response = browser.get(action + "/abort", allow_redirects=False, timeout=10)
            continue
        form = {"prompt": prompt}
        if prompt == "login":
            form.update(login=login, password="any")
        response = browser.post(action, data=form, allow_redirects=False, timeout=10)
    raise AssertionError("the OP never redirected back")


def callback_path(location):
    """Our callback URL as a path + query dict for Django's test client."""
    parts = urlsplit(location)
    return parts.path, {key: values[-1] for key, values in parse_qs(parts.query).items()}


def authorize_params(url):
    return {key: values[-1] for key, values in parse_qs(urlsplit(url).query).items()}


# --- the stub token endpoint ---------------------------------------------------------------------
def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _private_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwk(key, kid):
    numbers = key.public_key().public_numbers()
    as_bytes = lambda n: n.to_bytes((n.bit_length() + 7) // 8, "big")  # noqa: E731
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
            "n": _b64(as_bytes(numbers.n)), "e": _b64(as_bytes(numbers.e))}


class StubIdP(LoopbackServer):
    """Token endpoint + JWKS + userinfo on loopback. ``claims`` and ``sign`` shape the next ID token."""

    def __init__(self):
        self.key = _private_key()
        self.kid = "stub-1"
        self.jwks = [public_jwk(self.key, self.kid)]
        self.token_status, self.token_body = 200, None
        self.userinfo = None
        self.id_token = None  # the next ID token (a string), set by the test
        self.hits = []
        self.token_requests = []
        self.serve(self._handler())
        self.issuer = self.url

    def oidc_config(self, **changes):
        config = {"issuer": self.issuer, "clientId": "stub-client", "clientSecret": "stub-secret",
                  "pkce": True, "authorizationEndpoint": f"{self.url}/authorize",
                  "tokenEndpoint": f"{self.url}/token", "jwksEndpoint": f"{self.url}/jwks",
                  "tokenEndpointAuthentication": "client_secret_basic"}
        config.update(changes)
        return {key: value for key, value in config.items() if value is not None}

    def claims(self, nonce, **changes):
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": "stub-user-1", "aud": "stub-client", "iat": now,
                  "exp": now + 300, "nonce": nonce, "email": "eve@acme.com", "email_verified": True}
        claims.update(changes)
        return {key: value for key, value in claims.items() if value is not None}

    def sign(self, claims, key=None, kid=None, alg="RS256", headers=None):
        header = {"kid": kid or self.kid, **(headers or {})}
        return jwt.encode(claims, key or self.key, algorithm=alg, headers=header)

    def public_pem(self):
        return self.key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo)

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status, body, content_type="application/json"):
                payload = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):  # noqa: N802
                stub.hits.append(self.path)
                if self.path == "/jwks":
                    self._send(200, {"keys": stub.jwks})
                elif self.path == "/userinfo" and stub.userinfo is not None:
                    self._send(200, stub.userinfo)
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self):  # noqa: N802
                stub.hits.append(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                stub.token_requests.append((dict(self.headers), self.rfile.read(length).decode()))
                body = stub.token_body or {"access_token": "stub-access", "token_type": "Bearer",
                                           "expires_in": 3600, "id_token": stub.id_token}
                self._send(stub.token_status, body)

            def log_message(self, *args):
                pass

        return Handler


@pytest.fixture
def stub_idp(configure):
    stub = StubIdP()
    configure(trusted_origins=[stub.url])
    yield stub
    stub.close()


# --- providers -------------------------------------------------------------------------------------
@pytest.fixture
def make_provider(make_user):
    """``make_provider(provider_id, issuer, oidc_config, domain=..., **fields)``: an SsoProvider row."""
    from sso.models import SsoProvider

    owner = {}

    def create(provider_id, issuer, oidc_config=None, domain="acme.com", domain_verified=True, **fields):
        if "user" not in owner:
            owner["user"] = make_user(email="sso-admin@example.com")
        return SsoProvider.objects.create(
            provider_id=provider_id, issuer=issuer, domain=domain, oidc_config=oidc_config,
            user=owner["user"], domain_verified=domain_verified, **fields,
        )

    return create
