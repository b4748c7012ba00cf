"""SAML Single Logout against samlify (tests/js/saml_idp.mjs), in both directions and both bindings.

samlify verifies our signed LogoutRequest and LogoutResponse with the key of our SP metadata, and signs
its own; the sessions it names end without the browser's cookie.
"""

import json
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests

from authservice.models import Session
from sso.models import SamlSession
from tests.sso.saml.conftest import session_user, user_for
from tests.sso.saml.slo_support import FORM, POST, REDIRECT, local, slo_enabled, slo_path, slo_provider  # noqa: F401

JSON = {"Accept": "application/json"}


def _signed_in(provider, browser, email="ada@acme.com"):
    response = provider.sp_login(browser, user_for(email))
    assert response.status_code == 302, response.content
    assert session_user(browser)["email"] == email
    return SamlSession.objects.get(session__user__email=email)


def test_the_acs_keeps_the_name_id_and_session_index_with_the_session(slo_provider, browser):
    provider = slo_provider()
    record = _signed_in(provider, browser)
    assert record.provider_id == provider.record.pk
    assert record.name_id == "ada@acme.com"
    assert record.session_index and record.session_index.startswith("_")


def test_sp_initiated_logout_over_redirect_ends_the_session_and_returns_to_the_callback(slo_provider, browser):
    provider = slo_provider()
    record = _signed_in(provider, browser)
    response = browser.api_post("/sso/saml2/logout/acme-saml", {"callbackURL": "/signed-out"})
    assert response.status_code == 302, response.content
    assert session_user(browser) is None
    assert not Session.objects.filter(pk=record.session_id).exists()
    assert parse_qs(urlsplit(response["Location"]).query)["SigAlg"]

    idp = requests.get(response["Location"], headers=JSON, timeout=10)
    assert idp.status_code == 200, idp.text  # samlify verified our signature
    answer = idp.json()
    assert answer["request"]["nameID"] == "ada@acme.com"
    assert answer["request"]["sessionIndex"] == record.session_index

    back = browser.get(local(answer["url"]))
    assert back.status_code == 302, back.content
    assert back["Location"] == "/signed-out"


def test_sp_initiated_logout_over_post_sends_a_signed_form(slo_provider, browser):
    provider = slo_provider(bindings=(POST,))
    _signed_in(provider, browser)
    response = browser.api_post("/sso/saml2/logout/acme-saml", {"callbackURL": "/signed-out"})
    assert response.status_code == 200, response.content
    page = response.content.decode()
    assert response["Content-Type"].startswith("text/html")
    assert "script-src 'sha256-" in response["Content-Security-Policy"]
    action = page.split('action="', 1)[1].split('"', 1)[0]
    saml_request = page.split('name="SAMLRequest" value="', 1)[1].split('"', 1)[0]
    idp = requests.post(action, data={"SAMLRequest": saml_request}, headers=JSON, timeout=10)
    assert idp.status_code == 200, idp.text
    answer = idp.json()
    assert answer["binding"] == "post"
    back = browser.post(slo_path("acme-saml"), urlencode({"SAMLResponse": answer["SAMLResponse"]}),
                        content_type=FORM, HTTP_ORIGIN="http://127.0.0.1:1")
    assert back.status_code == 302, back.content
    assert back["Location"] == "/signed-out"


@pytest.mark.parametrize("binding", ["redirect", "post"])
def test_idp_initiated_logout_ends_the_named_session_without_the_cookie(slo_provider, browser, binding):
    from tests.conftest import ApiClient

    provider = slo_provider()
    record = _signed_in(provider, browser)
    made = requests.post(f"{provider.idp.url}/idp-logout/acme-saml", timeout=10, json={
        "nameId": "ada@acme.com", "sessionIndex": record.session_index, "binding": binding}).json()
    idp_browser = ApiClient(origin=None)  # the IdP's page, without our cookie
    if binding == "redirect":
        response = idp_browser.get(local(made["url"]))
    else:
        response = idp_browser.post(slo_path("acme-saml"), urlencode({"SAMLRequest": made["SAMLRequest"]}),
                                    content_type=FORM, HTTP_ORIGIN="http://127.0.0.1:1")
    assert not Session.objects.filter(pk=record.session_id).exists()
    assert session_user(browser) is None
    if binding == "redirect":
        assert response.status_code == 302, response.content
        checked = requests.get(response["Location"], headers=JSON, timeout=10)
    else:
        assert response.status_code == 200, response.content
        page = response.content.decode()
        value = page.split('name="SAMLResponse" value="', 1)[1].split('"', 1)[0]
        checked = requests.post(f"{provider.idp.url}/slo/acme-saml", data={"SAMLResponse": value}, timeout=10)
    assert checked.status_code == 200, checked.text  # samlify verified our signed LogoutResponse
    assert json.loads(checked.text)["response"]["response"]["inResponseTo"] == made["id"]


def test_sp_metadata_advertises_single_logout_when_enabled(slo_provider, saml_owner):
    slo_provider()
    metadata = saml_owner.api_get("/sso/saml2/sp/metadata", {"providerId": "acme-saml"}).content.decode()
    for binding in (REDIRECT, POST):
        assert (f'<md:SingleLogoutService Binding="{binding}" '
                f'Location="http://127.0.0.1:8000/api/auth/sso/saml2/sp/slo/acme-saml"/>') in metadata
