"""Two server processes agree on single-use SSO state (issue 8 §3, issue 7 "posted twice, also to a second
server process").

- SAML: a genuine assertion, signed by a test IdP key with the xmlsec1 binary (tests/sso/saml/idp_signer.py)
  and posted IdP-initiated to A's ACS, signs the user in; the same SAMLResponse posted to B is a replay.
- OIDC: a sign-in started on A (state row + signed ``auth.state`` cookie), completed at a real OpenID
  provider (npm ``oidc-provider``, tests/js/sso_oidc_provider.mjs) and brought back to B's callback, which
  consumes the state and exchanges the code; the same callback replayed to A is refused.

Both providers are rows written straight into the servers' shared database, domain already verified, as
an admin (or ``sso`` management command) would leave them. The pair runs with IdP-initiated SAML allowed and
with loopback origins trusted: the OP's port is chosen when it starts, after the servers, and the servers
only fetch tokens from trusted private hosts.
"""

import json
import sqlite3
import subprocess
import sys
import threading
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from sso.state import row_identifier
from tests.multiprocess.conftest import (
    DATABASE,
    ROOT,
    PairOptions,
    admin_connection,
    postgres_url,
)
from tests.sso.conftest_oidc import BASIC_SECRET, JS, OP_SCRIPT, op_login
from tests.sso.conftest_oidc import _node_or_skip as node_or_skip
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import Claims

_SSO_ENV = (("AUTH_SSO_SAML_ALLOW_IDP_INITIATED", "true"),)
_LOOPBACK = ("http://127.0.0.1:*",)
pytestmark = pytest.mark.parametrize(
    "pair", [PairOptions(variant, _SSO_ENV, _LOOPBACK) for variant in ("redis", "database")],
    indirect=True, ids=lambda options: options.variant)

SAML_ID, SAML_DOMAIN = "acme-saml", "acme.com"
OIDC_ID, OIDC_DOMAIN = "globex-oidc", "globex.com"
IDP_ENTITY = "https://idp.acme.test/entity"
IDP_ORIGIN = "https://idp.acme.test"
OWNER = "sso-owner@example.com"
SESSION_COOKIE = "auth.session_token"
STATE_COOKIE = "auth.state"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}

_CREATE_PROVIDERS = """
import json, sys
import django
django.setup()
from authservice import users
from sso.models import SsoProvider
spec = json.loads(sys.argv[1])
owner = users.create(email=spec["owner"], name="Owner", email_verified=True)
for row in spec["providers"]:
    SsoProvider.objects.create(user=owner, domain_verified=True, **row)
"""


# --- the shared database -------------------------------------------------------------------------
def count(pair, table, column, value):
    """Rows of ``table`` whose ``column`` is ``value``, read straight from the servers' database."""
    if postgres_url() is None:
        with sqlite3.connect(pair.database_url.removeprefix("sqlite:///")) as connection:
            return connection.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", (value,)).fetchone()[0]
    with admin_connection(DATABASE) as connection:
        return connection.execute(f"SELECT count(*) FROM {table} WHERE {column} = %s", (value,)).fetchone()[0]


def users_with(pair, email):
    return count(pair, "authservice_user", "email", email)


# --- peers ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def idp_key(tmp_path_factory):
    idp_signer.require_binaries()
    return idp_signer.make_keypair(tmp_path_factory.mktemp("multiproc-saml-keys"), "idp")


@pytest.fixture(scope="module")
def op(pair):
    """A real OpenID provider whose one client redirects to the servers' callback (A's origin is the base URL)."""
    node = node_or_skip()
    client = {"client_id": "globex-client", "client_secret": BASIC_SECRET,
              "token_endpoint_auth_method": "client_secret_basic",
              "redirect_uris": [f"{pair.a.base}/sso/callback/{OIDC_ID}"],
              "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}
    process = subprocess.Popen([node, str(OP_SCRIPT), json.dumps({"clients": [client]})], cwd=JS,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    if not line:
        process.kill()
        pytest.fail("oidc-provider did not start")
    yield json.loads(line)["issuer"]
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def providers(pair, idp_key, op):
    sp_entity = f"{pair.a.origin}/sp/{SAML_ID}"
    saml = {"provider_id": SAML_ID, "issuer": sp_entity, "domain": SAML_DOMAIN,
            "saml_config": {"issuer": sp_entity, "entryPoint": f"{IDP_ORIGIN}/sso", "cert": idp_key.cert_pem,
                            "idpMetadata": {"entityID": IDP_ENTITY}, "wantAssertionsSigned": True}}
    oidc = {"provider_id": OIDC_ID, "issuer": op, "domain": OIDC_DOMAIN,
            "oidc_config": {"issuer": op, "clientId": "globex-client", "clientSecret": BASIC_SECRET, "pkce": True,
                            "discoveryEndpoint": f"{op}/.well-known/openid-configuration",
                            "authorizationEndpoint": f"{op}/auth", "tokenEndpoint": f"{op}/token",
                            "jwksEndpoint": f"{op}/jwks", "userInfoEndpoint": f"{op}/me",
                            "tokenEndpointAuthentication": "client_secret_basic"}}
    spec = json.dumps({"owner": OWNER, "providers": [saml, oidc]})
    subprocess.run([sys.executable, "-c", _CREATE_PROVIDERS, spec], cwd=ROOT, env=pair.a.env, check=True,
                   timeout=60)
    return {"sp_entity": sp_entity}


# --- SAML ----------------------------------------------------------------------------------------
def signed_response(pair, idp_key, tmp_path, sp_entity, email):
    """A genuine IdP-initiated response for ``email``, assertion and response signed by the IdP's key."""
    acs = f"{pair.a.base}/sso/saml2/callback/{SAML_ID}"  # both servers' base URL is A's origin
    claims = Claims(issuer=IDP_ENTITY, destination=acs, audience=sp_entity, name_id=email,
                    attributes={"email": email, "givenName": "Ada", "surname": "Lovelace"})
    xml = idp_signer.sign(idp_signer.response_xml(claims), idp_key, claims.assertion_id, tmp_path)
    return idp_signer.encode(idp_signer.sign(xml, idp_key, claims.response_id, tmp_path))


def post_acs(browser, server, saml_response):
    """What the IdP's auto-submitting form does: a cross-site form POST to the server's ACS."""
    return browser.post(f"{server.base}/sso/saml2/callback/{SAML_ID}", data=urlencode({"SAMLResponse": saml_response}),
                        headers={**FORM, "Origin": IDP_ORIGIN}, allow_redirects=False, timeout=30)


def error_of(response):
    assert response.status_code == 302, response.text
    return parse_qs(urlsplit(response.headers["Location"]).query).get("error", [None])[0]


def test_a_saml_assertion_consumed_on_one_is_a_replay_on_the_other(pair, providers, idp_key, tmp_path):
    email = f"ada-{pair.variant}@{SAML_DOMAIN}"
    saml_response = signed_response(pair, idp_key, tmp_path, providers["sp_entity"], email)
    first, second = pair.client(), pair.client()

    accepted = post_acs(first, pair.a, saml_response)
    replayed = post_acs(second, pair.b, saml_response)

    assert accepted.status_code == 302, accepted.text
    assert SESSION_COOKIE in accepted.cookies
    assert first.session_of(pair.b)["user"]["email"] == email
    assert error_of(replayed) == "replay_detected"
    assert SESSION_COOKIE not in replayed.cookies
    assert second.session_of(pair.a) is None
    assert users_with(pair, email) == 1
    assert pair.server_errors() == []


def test_a_saml_assertion_raced_on_both_signs_in_once(pair, providers, idp_key, tmp_path):
    email = f"lin-{pair.variant}@{SAML_DOMAIN}"
    saml_response = signed_response(pair, idp_key, tmp_path, providers["sp_entity"], email)
    start = threading.Barrier(2)
    answers = {}

    def post(server):
        browser = pair.client()
        start.wait(timeout=10)
        answers[server.name] = post_acs(browser, server, saml_response)

    racers = [threading.Thread(target=post, args=(server,)) for server in pair.servers]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(timeout=60)

    outcomes = sorted(error_of(response) or "signed in" for response in answers.values())
    assert outcomes == ["replay_detected", "signed in"]
    assert sum(SESSION_COOKIE in response.cookies for response in answers.values()) == 1
    assert users_with(pair, email) == 1
    assert pair.server_errors() == []


# --- OIDC ----------------------------------------------------------------------------------------
def on(server, url, origin):
    """``url`` at ``origin`` aimed at ``server`` instead."""
    assert url.startswith(origin + "/"), url
    return server.origin + url[len(origin):]


def test_an_oidc_state_consumed_on_one_is_refused_on_the_other(pair, providers):
    email = f"grace-{pair.variant}@{OIDC_DOMAIN}"
    browser = pair.client()
    started = browser.api_post(pair.a, "/sign-in/sso", {"providerId": OIDC_ID, "callbackURL": "/dashboard"})
    assert started.status_code == 200, started.text
    state = parse_qs(urlsplit(started.json()["url"]).query)["state"][0]
    assert browser.cookies.get(STATE_COOKIE)
    assert count(pair, "authservice_verification", "identifier", row_identifier(state)) == 1
    callback = op_login(started.json()["url"], email, callback_prefix=f"{pair.a.base}/sso/callback/{OIDC_ID}?")
    stolen = browser.cookies.copy()  # the signed state cookie, as an attacker replaying the callback holds it

    completed = browser.get(on(pair.b, callback, pair.a.origin), allow_redirects=False, timeout=30)
    attacker = pair.client()
    attacker.cookies = stolen
    replayed = attacker.get(callback, allow_redirects=False, timeout=30)

    assert completed.status_code == 302, completed.text
    assert completed.headers["Location"] == "/dashboard"
    assert browser.session_of(pair.a)["user"]["email"] == email
    assert count(pair, "authservice_verification", "identifier", row_identifier(state)) == 0
    assert error_of(replayed) == "state_mismatch"
    assert SESSION_COOKIE not in replayed.cookies
    assert users_with(pair, email) == 1
    assert pair.server_errors() == []
