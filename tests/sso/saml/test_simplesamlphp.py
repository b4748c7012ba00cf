"""Interop with an IdP we did not write: Debian's SimpleSAMLphp, SP-initiated, over real HTTP.

A ``requests.Session`` plays the browser: our sign-in answers with the IdP URL, the IdP shows its
login form, the credentials are posted, the IdP answers with its auto-submit form carrying the
SAMLResponse, and that form is posted to our ACS on pytest-django's live server. SimpleSAMLphp sends
``sn`` and ``givenName`` and no ``displayName``; the user's name must still come out right.
"""

from urllib.parse import urljoin

import pytest
import requests
from django.contrib.auth import get_user_model

from authservice.models import Account
from sso.models import SsoProvider
from tests.sso.saml.simplesamlphp import PASSWORD, USERNAME, Forms, simplesamlphp  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def app(live_server, configure, simplesamlphp):  # noqa: F811 - the fixture above
    configure(base_url=live_server.url, trusted_origins=[simplesamlphp.url])
    return live_server.url


def make_provider(app, idp, make_user, provider_id, **config):
    owner = make_user(email=f"owner-{provider_id}@acme.com")
    sp_entity = f"{app}/sp/{provider_id}"
    provider = SsoProvider.objects.create(
        provider_id=provider_id, issuer=sp_entity, domain="acme.com", user=owner, domain_verified=True,
        saml_config={"issuer": sp_entity, "entryPoint": idp.sso_url, "wantAssertionsSigned": True, **config})
    metadata = requests.get(f"{app}/api/auth/sso/saml2/sp/metadata",
                            params={"providerId": provider_id, "format": "xml"}, timeout=10)
    assert metadata.status_code == 200, metadata.text
    idp.add_sp(provider_id, metadata.text)
    return provider


def browser_login(app, provider_id, callback="/dashboard"):
    """Sign in through the IdP like a browser; returns (session, the ACS's answer)."""
    browser = requests.Session()
    started = browser.post(f"{app}/api/auth/sign-in/sso", json={"providerId": provider_id, "callbackURL": callback},
                           headers={"Origin": app}, timeout=10)
    assert started.status_code == 200, started.text
    page = browser.get(started.json()["url"], timeout=20)
    assert page.status_code == 200, page.text[:2000]
    login = next(form for form in Forms(page.text).forms if "password" in form["fields"])
    fields = {**login["fields"], "username": USERNAME, "password": PASSWORD}
    answer = browser.post(urljoin(page.url, login["action"]), data=fields, timeout=20)
    assert answer.status_code == 200, answer.text[:2000]
    post_back = next((form for form in Forms(answer.text).forms if "SAMLResponse" in form["fields"]), None)
    assert post_back is not None, answer.text[:3000]
    assert post_back["action"] == f"{app}/api/auth/sso/saml2/callback/{provider_id}"
    acs = browser.post(post_back["action"], data=post_back["fields"], allow_redirects=False, timeout=20)
    return browser, acs


def assert_signed_in(app, browser, acs, provider_id):
    assert acs.status_code == 302, acs.text[:2000]
    assert acs.headers["Location"] == "/dashboard"
    assert browser.cookies.get("auth.session_token")
    user = get_user_model().objects.get(email="ada@acme.com")
    assert user.name == "Ada Lovelace"
    assert Account.objects.get(provider_id=provider_id, user=user).account_id == "ada@acme.com"
    session = browser.get(f"{app}/api/auth/get-session", timeout=10).json()
    assert session["user"]["email"] == "ada@acme.com"


def test_sign_in_with_simplesamlphp_configured_by_certificate(app, simplesamlphp, make_user):  # noqa: F811
    make_provider(app, simplesamlphp, make_user, "ssp-cert", cert=simplesamlphp.cert_pem,
                  idpMetadata={"entityID": simplesamlphp.entity_id})
    browser, acs = browser_login(app, "ssp-cert")
    assert_signed_in(app, browser, acs, "ssp-cert")


def test_sign_in_with_simplesamlphp_configured_by_its_metadata(app, simplesamlphp, make_user):  # noqa: F811
    make_provider(app, simplesamlphp, make_user, "ssp-md", idpMetadata={"metadata": simplesamlphp.metadata()})
    browser, acs = browser_login(app, "ssp-md")
    assert_signed_in(app, browser, acs, "ssp-md")


def test_simplesamlphp_metadata_by_url_is_fetched_and_used(app, simplesamlphp, make_user):  # noqa: F811
    from sso.saml import metadata_fetch

    config = metadata_fetch.hydrate({"idpMetadata": {"url": simplesamlphp.entity_id}})
    make_provider(app, simplesamlphp, make_user, "ssp-url", idpMetadata=config["idpMetadata"])
    browser, acs = browser_login(app, "ssp-url")
    assert_signed_in(app, browser, acs, "ssp-url")


def test_a_second_sign_in_reuses_the_user_and_account(app, simplesamlphp, make_user):  # noqa: F811
    make_provider(app, simplesamlphp, make_user, "ssp-again", cert=simplesamlphp.cert_pem,
                  idpMetadata={"entityID": simplesamlphp.entity_id})
    browser_login(app, "ssp-again")
    _, acs = browser_login(app, "ssp-again")
    assert acs.status_code == 302 and acs.headers["Location"] == "/dashboard"
    assert get_user_model().objects.filter(email="ada@acme.com").count() == 1
    assert Account.objects.filter(provider_id="ssp-again").count() == 1
