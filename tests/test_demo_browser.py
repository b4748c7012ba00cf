"""The demo page at ``/`` works in a real browser (issue 8 §4).

Playwright drives Debian's ``chromium`` (``/usr/bin/chromium``; Playwright's own browser download cannot
work here) against pytest-django's live server. The screenshot it leaves in ``tests/artifacts/demo.png`` is
the one the README shows. The SSO test signs in at a real OpenID provider (npm ``oidc-provider``,
tests/js/sso_oidc_provider.mjs) in the same browser.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = Path(__file__).resolve().parent / "artifacts" / "demo.png"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PASSWORD = "correct horse battery"
TIMEOUT_MS = 10_000
PHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1"


@pytest.fixture
def browser():
    if not CHROMIUM.exists():
        message = "/usr/bin/chromium is missing: run tests/install_peers.sh"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def open_demo(live_server, transactional_db, configure, browser):
    """``open_demo()``: the demo in a new browser context (a device of its own, with its own cookies)."""
    configure(base_url=live_server.url)
    contexts = []

    def open_page(**options):
        contexts.append(browser.new_context(viewport={"width": 900, "height": 560}, **options))
        page = contexts[-1].new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(live_server.url + "/")
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def demo(open_demo):
    return open_demo()


def sign_up(page, name, email):
    form = page.locator("#sign-up")
    form.get_by_placeholder("Name").fill(name)
    form.get_by_placeholder("E-mail").fill(email)
    form.get_by_placeholder("Password").fill(PASSWORD)
    form.get_by_role("button", name="Sign up").click()


def sign_in(page, email):
    form = page.locator("#sign-in")
    form.get_by_placeholder("E-mail").fill(email)
    form.get_by_placeholder("Password").fill(PASSWORD)
    form.get_by_role("button", name="Sign in").click()


def test_the_demo_signs_up_signs_in_lists_revokes_and_signs_out(demo, open_demo):
    from playwright.sync_api import expect

    page, email = demo, "grace@example.com"
    expect(page.locator("#signed-out")).to_be_visible()

    sign_up(page, "Grace", email)
    expect(page.locator("#who")).to_have_text(email)
    expect(page.locator("#sessions tr")).to_have_count(1)

    page.get_by_role("button", name="Sign out").click()
    expect(page.locator("#message")).to_have_text("Signed out.")
    expect(page.locator("#signed-out")).to_be_visible()

    sign_in(page, email)
    expect(page.locator("#who")).to_have_text(email)
    phone = open_demo(user_agent=PHONE)
    sign_in(phone, email)
    expect(phone.locator("#who")).to_have_text(email)
    page.reload()
    expect(page.locator("#sessions tr")).to_have_count(2)
    expect(page.locator("#sessions tr", has_text="(this browser)")).to_have_count(1)
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)

    page.locator("#sessions tr", has_text="iPhone").get_by_role("button", name="Revoke").click()
    expect(page.locator("#message")).to_have_text("Session revoked.")
    expect(page.locator("#sessions tr")).to_have_count(1)
    phone.reload()
    expect(phone.locator("#signed-out")).to_be_visible()
    page.get_by_text("get-session").click()
    expect(page.locator("#session")).to_contain_text(email)

    page.get_by_role("button", name="Sign out").click()
    expect(page.locator("#signed-out")).to_be_visible()
    page.reload()
    expect(page.locator("#signed-out")).to_be_visible()


def test_the_demo_shows_a_wrong_password_as_a_message(demo):
    from playwright.sync_api import expect

    page = demo
    form = page.locator("#sign-in")
    form.get_by_placeholder("E-mail").fill("nobody@example.com")
    form.get_by_placeholder("Password").fill("not the password")
    form.get_by_role("button", name="Sign in").click()

    expect(page.locator("#message")).to_have_text("Invalid email or password")
    expect(page.locator("#signed-out")).to_be_visible()


def test_the_demo_explains_when_sso_is_not_available(demo, live_server):
    from playwright.sync_api import expect

    page = demo
    form = page.locator("#sign-in-sso")
    form.get_by_placeholder("Work e-mail").fill("someone@unknown-company.example")
    form.get_by_role("button", name="Continue with SSO").click()

    expect(page.locator("#message")).to_have_text("Single sign-on is not set up for this e-mail address.")
    assert page.url == live_server.url + "/"  # stayed on the demo


# --- SSO -----------------------------------------------------------------------------------------
SSO_PROVIDER_ID = "globex"
SSO_DOMAIN = "globex.com"


@pytest.fixture
def sso_op(live_server, settings, configure):
    """A real OpenID provider whose client redirects to the live server, trusted, domain checks off."""
    from tests.sso.conftest_oidc import BASIC_SECRET, JS, OP_SCRIPT, _node_or_skip

    client = {"client_id": "globex-client", "client_secret": BASIC_SECRET,
              "token_endpoint_auth_method": "client_secret_basic",
              "redirect_uris": [f"{live_server.url}/api/auth/sso/callback/{SSO_PROVIDER_ID}"],
              "grant_types": ["authorization_code"], "response_types": ["code"]}
    process = subprocess.Popen([_node_or_skip(), str(OP_SCRIPT), json.dumps({"clients": [client]})], cwd=JS,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    if not line:
        process.kill()
        pytest.fail("oidc-provider did not start")
    issuer = json.loads(line)["issuer"]
    configure(trusted_origins=[issuer])  # the server fetches tokens from a private host only when trusted
    settings.AUTHSERVICE_SSO = {**getattr(settings, "AUTHSERVICE_SSO", {}), "domain_verification": {"enabled": False}}
    yield {"issuer": issuer, "client_id": client["client_id"], "client_secret": BASIC_SECRET}
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def sso_provider(sso_op, transactional_db):
    from authservice import users
    from sso.models import SsoProvider

    issuer = sso_op["issuer"]
    owner = users.create(email="it@globex.com", password=PASSWORD, name="IT")
    return SsoProvider.objects.create(
        provider_id=SSO_PROVIDER_ID, issuer=issuer, domain=SSO_DOMAIN, user=owner,
        oidc_config={"issuer": issuer, "clientId": sso_op["client_id"], "clientSecret": sso_op["client_secret"],
                     "pkce": True, "authorizationEndpoint": f"{issuer}/auth", "tokenEndpoint": f"{issuer}/token",
                     "jwksEndpoint": f"{issuer}/jwks", "userInfoEndpoint": f"{issuer}/me",
                     "tokenEndpointAuthentication": "client_secret_basic"})


def test_the_demo_signs_in_with_sso_at_the_domains_identity_provider(sso_provider, demo, live_server):
    from playwright.sync_api import expect

    page, email = demo, "ada@globex.com"
    form = page.locator("#sign-in-sso")
    form.get_by_placeholder("Work e-mail").fill(email)
    form.get_by_role("button", name="Continue with SSO").click()

    page.wait_for_url(f"{sso_provider.issuer}/**")
    expect(page.locator('input[name="login"]')).to_have_value(email)  # the login_hint we sent
    page.locator('input[name="password"]').fill("any")
    page.get_by_role("button", name="Sign-in").click()
    page.get_by_role("button", name="Continue").click()  # consent

    page.wait_for_url(live_server.url + "/")
    expect(page.locator("#who")).to_have_text(email)
    expect(page.locator("#sessions tr")).to_have_count(1)
    page.get_by_text("get-session").click()
    expect(page.locator("#session")).to_contain_text(email)
    accounts = page.evaluate("fetch('/api/auth/list-accounts').then((response) => response.json())")
    assert [account["providerId"] for account in accounts] == [SSO_PROVIDER_ID]
