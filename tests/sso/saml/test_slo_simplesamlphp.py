"""SAML Single Logout with an IdP we did not write: Debian's SimpleSAMLphp, over real HTTP.

SimpleSAMLphp signs its logout messages to us and refuses our unsigned ones (``sign.logout`` and
``validate.logout`` in tests/sso/saml/simplesamlphp.py). A ``requests.Session`` plays the browser and
follows every redirect by hand, so each hop between the IdP and our live server is seen.
"""

from urllib.parse import urlsplit

import pytest
import requests

from authservice.models import Session
from sso.models import SamlSession
from tests.sso.saml.simplesamlphp import simplesamlphp  # noqa: F401 - fixture
from tests.sso.saml.test_simplesamlphp import browser_login, make_provider

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def app(live_server, configure, configure_sso, simplesamlphp):  # noqa: F811 - the fixture above
    configure(base_url=live_server.url, trusted_origins=[simplesamlphp.url])
    configure_sso(saml={"enable_single_logout": True})
    return live_server.url


@pytest.fixture
def signed_in(app, simplesamlphp, make_user, xmlsec_keys):  # noqa: F811
    """A browser signed in through SimpleSAMLphp by a provider configured from its metadata (which
    lists its SingleLogoutService), with an SP signing key."""
    sp = xmlsec_keys["sp"]
    make_provider(app, simplesamlphp, make_user, "ssp-slo", idpMetadata={"metadata": simplesamlphp.metadata()},
                  spMetadata={"privateKey": sp.key_path.read_text(), "signingCert": sp.cert_pem})
    browser, acs = browser_login(app, "ssp-slo")
    assert acs.status_code == 302, acs.text[:2000]
    assert browser.cookies.get("auth.session_token")
    return browser


def _follow(browser, response, stop):
    """Follow 302s until one leaves for ``stop`` (a URL prefix or a relative path); returns that Location."""
    for _ in range(10):
        assert response.status_code in (302, 303), (response.status_code, response.text[-3000:],
                                                    response.url)
        location = response.headers["Location"]
        if location.startswith(stop):
            return location
        response = browser.get(location, allow_redirects=False, timeout=20)
    raise AssertionError("too many redirects")


def test_sp_initiated_logout_through_simplesamlphp_returns_to_the_callback(app, signed_in, simplesamlphp):  # noqa: F811
    record = SamlSession.objects.get(provider__provider_id="ssp-slo")
    started = signed_in.post(f"{app}/api/auth/sso/saml2/logout/ssp-slo", json={"callbackURL": "/signed-out"},
                             headers={"Origin": app}, allow_redirects=False, timeout=20)
    assert started.status_code == 302, started.text
    assert started.headers["Location"].startswith(simplesamlphp.slo_url)
    assert not Session.objects.filter(pk=record.session_id).exists()
    # SimpleSAMLphp checks our signature, ends its session and answers with its signed LogoutResponse,
    # which our SLO service takes and turns into the redirect to the callback.
    assert _follow(signed_in, started, "/signed-out") == "/signed-out"
    assert signed_in.get(f"{app}/api/auth/get-session", timeout=10).json() is None


def test_idp_initiated_logout_from_simplesamlphp_ends_our_session(app, signed_in, simplesamlphp):  # noqa: F811
    record = SamlSession.objects.get(provider__provider_id="ssp-slo")
    done = f"{simplesamlphp.url}/after-logout"  # SimpleSAMLphp returns only to its own host by default
    # The IdP's own logout page: SimpleSAMLphp sends its signed LogoutRequest to our SLO service
    # (without our cookie being needed), takes our signed LogoutResponse, then goes to RelayState.
    idp_only = requests.Session()
    for cookie in signed_in.cookies:
        if cookie.name != "auth.session_token":
            idp_only.cookies.set_cookie(cookie)
    response = idp_only.get(simplesamlphp.init_slo_url, params={"RelayState": done}, allow_redirects=False,
                            timeout=20)
    assert _follow(idp_only, response, done) == done
    assert not Session.objects.filter(pk=record.session_id).exists()
    assert signed_in.get(f"{app}/api/auth/get-session", timeout=10).json() is None
