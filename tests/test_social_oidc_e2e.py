"""End to end against a real OpenID provider we did not write: npm oidc-provider (OpenID Certified),
started on a loopback port. A requests.Session plays the browser: it starts the flow at our live
server, logs in on the OP's own login form, and follows the OP back to our callback (core.md §5)."""

import pytest
import requests
from django.contrib.auth import get_user_model

from authservice import users
from authservice.models import Account, Session
from tests.peers import oidc_op

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not oidc_op.available(), reason="needs node + tests/js")]
SECRET = "django-client-secret-0123456789"


@pytest.fixture(scope="session")
def op(live_server):
    base = f"{live_server.url}/api/auth/callback"
    provider = oidc_op.OpenIDProvider([
        {"client_id": "django", "client_secret": SECRET, "redirect_uris": [f"{base}/corp"],
         "token_endpoint_auth_method": "client_secret_basic"},
        {"client_id": "django-post", "client_secret": SECRET, "redirect_uris": [f"{base}/corp-post"],
         "token_endpoint_auth_method": "client_secret_post"},
    ])
    yield provider
    provider.stop()


@pytest.fixture
def app(op, live_server, configure, transactional_db):
    """Our service at the live server's URL, with the OP configured as ``corp`` (and ``corp-post``)."""
    configure(base_url=live_server.url, trusted_origins=[op.issuer], social_providers={
        "corp": {"type": "oidc", "issuer": op.issuer, "clientId": "django", "clientSecret": SECRET},
        "corp-post": {"type": "oidc", "issuer": op.issuer, "clientId": "django-post", "clientSecret": SECRET,
                      "scopes": ["openid", "email", "profile"], "tokenEndpointAuthMethod": "client_secret_post"},
    })
    return live_server.url


class Browser:
    def __init__(self, app):
        self.app = app
        self.session = requests.Session()

    def start(self, provider="corp", path="/sign-in/social", **body):
        response = self.session.post(f"{self.app}/api/auth{path}", json={"provider": provider, **body},
                                     headers={"Origin": self.app}, timeout=10)
        assert response.status_code == 200, response.text
        return response.json()["url"]

    def login(self, authorize_url, account_id, abort=False):
        return oidc_op.login(self.session, authorize_url, account_id, f"{self.app}/api/auth/callback/", abort)

    def visit(self, url):
        return self.session.get(url, allow_redirects=False, timeout=10)

    def get_session(self):
        return self.session.get(f"{self.app}/api/auth/get-session", timeout=10).json()


def sign_in(app, op, sub, provider="corp", **body):
    browser = Browser(app)
    callback_url = browser.login(browser.start(provider, **body), sub)
    return browser, browser.visit(callback_url)


def no_user_no_session():
    return get_user_model().objects.count() == 0 and Session.objects.count() == 0


def test_new_user_signs_up_through_the_real_op(app, op):
    op.add_account("e2e-new", email="Grace@Example.com", email_verified=True, name="Grace Hopper")
    browser, response = sign_in(app, op, "e2e-new", callbackURL="/dashboard", newUserCallbackURL="/welcome")
    assert response.status_code == 302 and response.headers["Location"] == "/welcome"
    user = get_user_model().objects.get()
    assert (user.email, users.name_of(user), users.is_email_verified(user)) == ("grace@example.com", "Grace Hopper", True)
    account = Account.objects.get(provider_id="corp")
    assert account.account_id == "e2e-new" and account.id_token and account.access_token
    assert set(account.scope.split(",")) == {"openid", "email", "profile"}
    assert browser.get_session()["user"]["email"] == "grace@example.com"


def test_callback_carries_the_rfc9207_issuer(app, op):
    op.add_account("e2e-iss", email="iss@example.com", email_verified=True)
    browser = Browser(app)
    callback_url = browser.login(browser.start(), "e2e-iss")
    assert oidc_op.query_of(callback_url)["iss"] == op.issuer


def test_returning_user_lands_on_callback_url(app, op):
    op.add_account("e2e-back", email="back@example.com", email_verified=True)
    sign_in(app, op, "e2e-back", callbackURL="/dashboard", newUserCallbackURL="/welcome")
    _, response = sign_in(app, op, "e2e-back", callbackURL="/dashboard", newUserCallbackURL="/welcome")
    assert response.headers["Location"] == "/dashboard"
    assert get_user_model().objects.count() == 1 and Session.objects.count() == 2


def test_client_secret_post_entry(app, op):
    op.add_account("e2e-post", email="post@example.com", email_verified=True)
    _, response = sign_in(app, op, "e2e-post", provider="corp-post", callbackURL="/dashboard")
    assert response.headers["Location"] == "/dashboard"
    assert Account.objects.get().provider_id == "corp-post"


def test_verified_local_user_is_linked(app, op, make_user):
    local = make_user(email="linked@example.com", email_verified=True)
    op.add_account("e2e-link", email="linked@example.com", email_verified=True)
    _, response = sign_in(app, op, "e2e-link", callbackURL="/dashboard")
    assert response.headers["Location"] == "/dashboard"
    assert Account.objects.get(provider_id="corp").user == local


def test_unverified_local_user_is_account_not_linked(app, op, make_user):
    make_user(email="unverified@example.com")
    op.add_account("e2e-unverified", email="unverified@example.com", email_verified=True)
    _, response = sign_in(app, op, "e2e-unverified", callbackURL="/dashboard", errorCallbackURL="/oops")
    assert response.headers["Location"] == "/oops?error=account_not_linked"
    assert Session.objects.count() == 0 and not Account.objects.filter(provider_id="corp").exists()


def test_user_cancelling_at_the_op_is_access_denied(app, op):
    browser = Browser(app)
    callback_url = browser.login(browser.start(errorCallbackURL="/oops"), "nobody", abort=True)
    response = browser.visit(callback_url)
    assert response.headers["Location"] == (
        "/oops?error=access_denied&error_description=End-User+aborted+interaction")
    assert no_user_no_session()


def test_tampered_code_is_refused_by_the_op_token_endpoint(app, op):
    op.add_account("e2e-code", email="code@example.com", email_verified=True)
    browser = Browser(app)
    callback_url = browser.login(browser.start(errorCallbackURL="/oops"), "e2e-code")
    response = browser.visit(callback_url.replace("code=", "code=x"))
    assert response.headers["Location"] == "/oops?error=invalid_code"
    assert no_user_no_session()


def test_issuer_mismatch_in_the_callback_is_refused(app, op):
    op.add_account("e2e-mixup", email="mixup@example.com", email_verified=True)
    browser = Browser(app)
    callback_url = browser.login(browser.start(errorCallbackURL="/oops"), "e2e-mixup")
    response = browser.visit(callback_url.replace("iss=", "iss=https%3A%2F%2Fevil.example%2F"))
    assert response.headers["Location"] == "/oops?error=issuer_mismatch"
    assert no_user_no_session()


def test_callback_in_another_browser_is_state_mismatch(app, op):
    op.add_account("e2e-csrf", email="csrf@example.com", email_verified=True)
    browser = Browser(app)
    callback_url = browser.login(browser.start(errorCallbackURL="/oops"), "e2e-csrf")
    response = Browser(app).visit(callback_url)  # the victim's browser has no state cookie
    assert response.headers["Location"] == "/oops?error=state_mismatch"
    assert no_user_no_session()


def test_link_social_through_the_real_op(app, op, make_user):
    from tests.conftest import PASSWORD

    user = make_user(email="owner@example.com", email_verified=True)
    op.add_account("e2e-owner", email="owner@example.com", email_verified=True)
    browser = Browser(app)
    signed = browser.session.post(f"{app}/api/auth/sign-in/email", json={
        "email": "owner@example.com", "password": PASSWORD}, headers={"Origin": app}, timeout=10)
    assert signed.status_code == 200
    url = browser.start(path="/link-social", callbackURL="/settings")
    response = browser.visit(browser.login(url, "e2e-owner"))
    assert response.headers["Location"] == "/settings"
    assert Account.objects.get(provider_id="corp").user == user
