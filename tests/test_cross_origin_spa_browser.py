"""An SPA on another origin signs up, reads its session and signs out, in a real browser (issue 13 §5).

The service runs on one loopback origin (``http://127.0.0.1:P1``, its base URL) and a static page is
served from a second (``http://127.0.0.1:P2``), listed in the trusted origins. The page calls the API
with ``fetch(BASE + path, {credentials: "include"})``: the browser sends a CORS preflight for each JSON
POST, which django-cors-headers answers for trusted origins (project/cors.py), and keeps the session
cookie the service sets.

Cookies: two ports of one host are the same *site*, so the service's ``SameSite=Lax`` cookie travels
with these requests. A page on another site (``https://app.example`` calling ``https://auth.example``)
would need ``SameSite=None`` cookies, which browsers accept only with ``Secure``, hence https (and
authservice has no setting for that attribute yet: it always sends Lax). Put the service on the app's
site instead (``auth.example.com`` for ``app.example.com``: same site, Lax works), or use bearer tokens.

Playwright drives Debian's chromium, as tests/test_demo_browser.py does (its ``browser`` fixture).
"""

import http.server
import json
import logging
import threading
from urllib.parse import urlencode

import pytest

from tests.test_demo_browser import TIMEOUT_MS, browser  # noqa: F401 - the fixture

PASSWORD = "correct horse battery"
LOOPBACK = "127.0.0.1"

# The SPA: a page that knows only the service's URL. ``call`` answers {status, body} or, when the browser
# refuses to hand the answer to the page (CORS), {error}.
PAGE = """<!doctype html>
<meta charset="utf-8"><title>SPA on another origin</title>
<script>
const BASE = %s;
async function call(path, {method = "GET", body, contentType = "application/json"} = {}) {
  const options = {method, credentials: "include"};
  if (body !== undefined) {
    options.headers = {"content-type": contentType};
    options.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  try {
    const response = await fetch(BASE + "/api/auth" + path, options);
    return {status: response.status, body: await response.json()};
  } catch (error) {
    return {error: error.name};
  }
}
</script>
"""


class _PageServer(http.server.ThreadingHTTPServer):
    daemon_threads = True


def _serve_page(service_url):
    html = (PAGE % json.dumps(service_url)).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, *args):
            pass

    server = _PageServer((LOOPBACK, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{LOOPBACK}:{server.server_address[1]}"


@pytest.fixture
def service(transactional_db):
    """The service on its own loopback origin (pytest-django's ``live_server`` listens on ``localhost``,
    another site than ``127.0.0.1``)."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer(f"{LOOPBACK}:0")
    yield server.url
    server.stop()


@pytest.fixture
def origins(service, settings, configure):
    """``{"trusted": url, "untrusted": url}``: two page origins next to the service, one of them trusted."""
    from project.cors import allowed_origins

    servers = {name: _serve_page(service) for name in ("trusted", "untrusted")}
    trusted = servers["trusted"][1]
    configure(base_url=service, trusted_origins=[trusted])
    settings.CORS_ALLOWED_ORIGINS, settings.CORS_ALLOWED_ORIGIN_REGEXES = allowed_origins([service, trusted])
    yield {name: url for name, (_, url) in servers.items()}
    for server, _ in servers.values():
        server.shutdown()
        server.server_close()


@pytest.fixture
def open_spa(origins, browser):  # noqa: F811 - browser last: it stops before the database is flushed
    """``open_spa("trusted")``: the SPA page from that origin, in a browser context of its own."""
    contexts = []

    def open_page(name):
        contexts.append(browser.new_context())
        page = contexts[-1].new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(origins[name] + "/")
        return page

    yield open_page
    for context in contexts:
        context.close()


def call(page, path, **options):
    return page.evaluate("([path, options]) => call(path, options)", [path, options])


def sign_up(page, email):
    return call(page, "/sign-up/email", method="POST", body={"name": "Ada", "email": email, "password": PASSWORD})


def test_a_trusted_spa_signs_up_reads_its_session_and_signs_out(open_spa):
    page = open_spa("trusted")

    signed_up = sign_up(page, "ada@example.com")
    assert signed_up["status"] == 200, signed_up
    session = call(page, "/get-session")
    assert session["status"] == 200
    assert session["body"]["user"]["email"] == "ada@example.com"

    assert call(page, "/sign-out", method="POST", body={})["status"] == 200
    assert call(page, "/get-session") == {"status": 200, "body": None}


def no_account(open_spa, email):
    """Asked through the wire: the ORM cannot be called while Playwright's event loop runs here."""
    answer = call(open_spa("trusted"), "/sign-in/email", method="POST", body={"email": email, "password": PASSWORD})
    return answer["status"] == 401


def test_an_untrusted_spa_cannot_sign_up_the_preflight_is_refused(open_spa):
    page = open_spa("untrusted")
    assert sign_up(page, "mallory@example.com") == {"error": "TypeError"}  # CORS: never sent
    assert no_account(open_spa, "mallory@example.com")


def test_an_untrusted_spas_simple_post_is_sent_and_refused_by_the_origin_check(open_spa, origins, service,
                                                                              caplog):
    page = open_spa("untrusted")
    logger = logging.getLogger("authservice.origins")
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO, logger="authservice.origins"):
            # A form's content type needs no preflight: the browser sends the request, the Origin check
            # refuses it (403 INVALID_ORIGIN), and the browser hides that answer from the page.
            body = urlencode({"name": "M", "email": "mallory@example.com", "password": PASSWORD})
            answer = call(page, "/sign-up/email", method="POST", body=body,
                          contentType="application/x-www-form-urlencoded")
    finally:
        logger.removeHandler(caplog.handler)
    assert answer == {"error": "TypeError"}
    refused = [record.getMessage() for record in caplog.records if record.name == "authservice.origins"]
    assert refused == [f"Refused Origin {origins['untrusted']!r}: not a trusted origin; "
                       f"trusted origins: {service}, {origins['trusted']}"]
    assert no_account(open_spa, "mallory@example.com")
