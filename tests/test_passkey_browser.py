"""better-auth's own ``passkeyClient()`` (@better-auth/passkey 1.7.6 on better-auth 1.7.6) runs against the
service in Chromium, with a CDP virtual authenticator (issue 17 §2): sign up, register a passkey, sign out,
sign in with it, list it, delete it.

The service listens on ``http://localhost:P1`` (browsers refuse an IP address as RP ID; the RP ID is the
base URL's hostname, ``localhost``). The page, with the client bundled by esbuild from
tests/js/passkey/node_modules (its own pinned packages: the other client tests stay on 1.7.5), is served
from ``http://localhost:P2``, a trusted origin, which is also the origin the ceremonies come from.
"""

import http.server
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from tests.test_demo_browser import TIMEOUT_MS, browser  # noqa: F401 - the fixture

PASSWORD = "correct horse battery"
HOST = "localhost"
JS = Path(__file__).resolve().parent / "js" / "passkey"
PAGE = """<!doctype html>
<meta charset="utf-8"><title>passkeyClient()</title>
<script src="/client.js"></script>
<script>window.auth = makeClient(%s);</script>
"""


@pytest.fixture(scope="module")
def client_bundle(tmp_path_factory):
    esbuild = JS / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        message = "tests/js/passkey/node_modules is missing: run tests/install_peers.sh"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    out = tmp_path_factory.mktemp("passkey") / "client.js"
    subprocess.run([str(esbuild), str(JS / "client.mjs"), "--bundle", "--format=iife", f"--outfile={out}"],
                   check=True, capture_output=True, cwd=JS, timeout=60)
    return out.read_bytes()


def _serve(files):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body, kind = files.get(self.path.split("?")[0], (b"", None))
            self.send_response(200 if kind else 404)
            self.send_header("Content-Type", kind or "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer((HOST, 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def service(transactional_db):
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer(f"{HOST}:0")
    yield server.url
    server.stop()


@pytest.fixture
def page_url(service, client_bundle, settings, configure):
    from project.cors import allowed_origins

    files = {"/": ((PAGE % json.dumps(service + "/api/auth")).encode(), "text/html; charset=utf-8"),
             "/client.js": (client_bundle, "text/javascript")}
    server = _serve(files)
    url = f"http://{HOST}:{server.server_address[1]}"
    configure(base_url=service, trusted_origins=[url], passkey={"enabled": True})
    settings.CORS_ALLOWED_ORIGINS, settings.CORS_ALLOWED_ORIGIN_REGEXES = allowed_origins([service, url])
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture
def page(page_url, browser):  # noqa: F811 - browser last: it stops before the database is flushed
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})
    page.goto(page_url + "/")
    page.wait_for_function("window.auth !== undefined")
    yield page
    context.close()


def run(page, script):
    """``await`` the client call in ``script`` (``auth`` is the client) and answer {data, error}."""
    return page.evaluate(f"async () => {{ const r = await ({script}); "
                         "return {data: r.data ?? null, error: r.error ?? null}; }")


def test_passkey_client_registers_signs_in_lists_and_deletes(page):
    signed_up = run(page, f'auth.signUp.email({{name: "Ada", email: "ada@example.com", password: "{PASSWORD}"}})')
    assert signed_up["error"] is None, signed_up

    added = run(page, 'auth.passkey.addPasskey({name: "Chromium"})')
    assert added["error"] is None, added
    assert added["data"]["name"] == "Chromium" and added["data"]["credentialID"]

    assert run(page, "auth.signOut()")["error"] is None
    assert run(page, "auth.getSession()")["data"] is None

    signed_in = run(page, "auth.signIn.passkey()")
    assert signed_in["error"] is None, signed_in
    assert signed_in["data"]["user"]["email"] == "ada@example.com"
    assert run(page, "auth.getSession()")["data"]["user"]["email"] == "ada@example.com"

    listed = run(page, "auth.passkey.listUserPasskeys()")
    assert [p["id"] for p in listed["data"]] == [added["data"]["id"]]

    renamed = run(page, f'auth.passkey.updatePasskey({{id: "{added["data"]["id"]}", name: "Work laptop"}})')
    assert renamed["data"]["passkey"]["name"] == "Work laptop"

    deleted = run(page, f'auth.passkey.deletePasskey({{id: "{added["data"]["id"]}"}})')
    assert deleted["data"] == {"status": True}
    assert run(page, "auth.passkey.listUserPasskeys()")["data"] == []


def test_a_deleted_passkey_signs_in_no_one_in_the_browser(page):
    run(page, f'auth.signUp.email({{name: "Ada", email: "ada@example.com", password: "{PASSWORD}"}})')
    added = run(page, "auth.passkey.addPasskey()")
    run(page, f'auth.passkey.deletePasskey({{id: "{added["data"]["id"]}"}})')
    run(page, "auth.signOut()")
    refused = run(page, "auth.signIn.passkey()")
    assert refused["error"]["code"] == "PASSKEY_NOT_FOUND"
    assert run(page, "auth.getSession()")["data"] is None
