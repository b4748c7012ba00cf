"""I9: SP-initiated SAML state is bound to the browser that started it (issue 12, "also found").

The attacker starts a sign-in in their own browser, lets the IdP answer for their own account, and
has the victim's browser post that response and RelayState to our ACS (login CSRF): the victim
would be signed in as the attacker. The ACS now refuses a RelayState that arrives without the
signed ``relay_state`` cookie set by the sign-in that created it. IdP-initiated responses carry no
RelayState and need no cookie. On https the cookie is ``SameSite=None; Secure`` so it survives the
IdP's cross-site POST.
"""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from authservice.models import Session
from tests.conftest import BASE, ApiClient
from tests.security.saml import corpus
from tests.sso.saml import idp_signer

pytestmark = pytest.mark.django_db




def begin(browser):
    response = browser.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard"})
    assert response.status_code == 200, response.content
    query = parse_qs(urlsplit(response.json()["url"]).query)
    return idp_signer.request_id(query["SAMLRequest"][0]), query["RelayState"][0], response


def post(browser, xml, relay_state=None):
    data = {"SAMLResponse": idp_signer.encode(xml)}
    if relay_state is not None:
        data["RelayState"] = relay_state
    return browser.post(f"{BASE}/sso/saml2/callback/acme", urlencode(data),
                        content_type="application/x-www-form-urlencoded", HTTP_ORIGIN="https://idp.acme.test")


def attackers_response(idp_key, tmp_path, request_id):
    return corpus.Forge(idp_key, tmp_path, request_id).response_signed()[1]


def test_the_browser_that_started_the_sign_in_completes_it(acme, idp_key, tmp_path):
    browser = ApiClient()
    request_id, relay_state, _ = begin(browser)
    response = post(browser, attackers_response(idp_key, tmp_path, request_id), relay_state)
    assert response["Location"] == "/dashboard"
    assert Session.objects.count() == 1


def test_a_relay_state_posted_from_another_browser_is_refused(acme, idp_key, tmp_path):
    attacker, victim = ApiClient(), ApiClient()
    request_id, relay_state, _ = begin(attacker)
    response = post(victim, attackers_response(idp_key, tmp_path, request_id), relay_state)
    assert response.status_code == 302
    query = parse_qs(urlsplit(response["Location"]).query)
    assert query["error"] == ["invalid_state"]
    assert query["error_description"] == ["relay_state_mismatch"]
    assert not Session.objects.exists()
    assert "auth.session_token" not in victim.cookies or not victim.cookies["auth.session_token"].value


def test_a_relay_state_with_the_cookie_of_another_sign_in_is_refused(acme, idp_key, tmp_path):
    attacker, victim = ApiClient(), ApiClient()
    request_id, relay_state, _ = begin(attacker)
    begin(victim)  # the victim holds a cookie, but for its own RelayState
    response = post(victim, attackers_response(idp_key, tmp_path, request_id), relay_state)
    assert "error=invalid_state" in response["Location"]
    assert not Session.objects.exists()


def test_an_idp_initiated_response_needs_no_cookie(acme, idp_key, tmp_path, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True})
    response = post(ApiClient(), attackers_response(idp_key, tmp_path, None))
    assert response.status_code == 302 and "error=" not in response["Location"], response["Location"]
    assert Session.objects.count() == 1


def test_the_cookie_survives_the_idps_cross_site_post_on_https(acme, settings):
    settings.AUTHSERVICE = {**settings.AUTHSERVICE, "secure_cookies": True}
    _, _, response = begin(ApiClient())
    cookie = response.cookies["__Secure-auth.relay_state"]
    assert cookie["samesite"] == "None" and cookie["secure"] and cookie["httponly"]


def test_on_plain_http_the_cookie_is_lax_where_the_loopback_idp_is_same_site(acme):
    _, _, response = begin(ApiClient())
    cookie = response.cookies["auth.relay_state"]
    assert cookie["samesite"] == "Lax" and not cookie["secure"]


def test_an_sp_initiated_response_posted_without_its_relay_state_is_refused(acme, idp_key, tmp_path, configure_sso):
    # Dropping the RelayState must not turn the attacker's answer into an "IdP-initiated" one.
    configure_sso(saml={"allow_idp_initiated": True})
    attacker, victim = ApiClient(), ApiClient()
    request_id, _, _ = begin(attacker)
    response = post(victim, attackers_response(idp_key, tmp_path, request_id))
    query = parse_qs(urlsplit(response["Location"]).query)
    assert query["error"] == ["invalid_state"] and query["error_description"] == ["relay_state_missing"]
    assert not Session.objects.exists()


def test_a_response_to_one_request_posted_with_another_sign_ins_relay_state_is_refused(acme, idp_key, tmp_path):
    browser = ApiClient()
    first_request, _, _ = begin(browser)
    _, second_relay_state, _ = begin(browser)  # the browser's cookie now binds the second RelayState
    response = post(browser, attackers_response(idp_key, tmp_path, first_request), second_relay_state)
    assert "error=invalid_state" in response["Location"]
    assert not Session.objects.exists()
