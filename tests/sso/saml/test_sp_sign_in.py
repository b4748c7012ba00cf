"""POST /sign-in/sso for a SAML provider: the AuthnRequest over HTTP-Redirect (sso.md §3, §5)."""

import base64
import json
import zlib
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

from defusedxml import ElementTree
from django.utils import timezone

from authservice.models import Verification
from sso.state import row_identifier
from tests.conftest import BASE, ORIGIN, error_of
from tests.sso.saml.conftest import post_acs, session_user, user_for

SAMLP = "{urn:oasis:names:tc:SAML:2.0:protocol}"
SAML = "{urn:oasis:names:tc:SAML:2.0:assertion}"


def _request_of(url):
    query = parse_qs(urlsplit(url).query)
    xml = zlib.decompress(base64.b64decode(query["SAMLRequest"][0]), -15)
    return ElementTree.fromstring(xml), query


def test_sign_in_answers_the_idp_url_with_an_authn_request_and_the_relay_state(saml_provider, saml_idp, browser):
    provider = saml_provider("acme-saml")
    response = browser.api_post("/sign-in/sso", {"providerId": "acme-saml", "callbackURL": "/dashboard"})
    assert response.status_code == 200
    body = response.json()
    assert body["redirect"] is True
    assert body["url"].startswith(f"{saml_idp.url}/sso/acme-saml?SAMLRequest=")
    request, query = _request_of(body["url"])
    assert len(query["RelayState"][0]) == 32
    assert "SigAlg" not in query and "Signature" not in query
    assert request.tag == f"{SAMLP}AuthnRequest"
    assert request.get("ID").startswith("_") and request.get("Version") == "2.0"
    assert request.get("IssueInstant")
    assert request.get("Destination") == f"{saml_idp.url}/sso/acme-saml"
    assert request.get("ProtocolBinding") == "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
    assert request.get("AssertionConsumerServiceURL") == f"{ORIGIN}{BASE}/sso/saml2/callback/acme-saml"
    assert request.find(f"{SAML}Issuer").text == provider.record.issuer
    policy = request.find(f"{SAMLP}NameIDPolicy")
    assert policy.get("Format") == "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
    assert policy.get("AllowCreate") == "true"


def test_sign_in_sets_the_signed_relay_state_cookie(saml_provider, browser):
    saml_provider("acme-saml")
    response = browser.api_post("/sign-in/sso", {"providerId": "acme-saml", "callbackURL": "/dashboard"})
    cookie = response.cookies["auth.relay_state"]
    relay_state = parse_qs(urlsplit(response.json()["url"]).query)["RelayState"][0]
    assert relay_state in cookie.value  # signed: "<value>.<signature>"
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["path"] == "/"
    assert cookie["max-age"] == 300


def test_the_relay_state_cookie_ignores_a_strict_same_site_setting(saml_provider, browser, configure):
    # Strict would keep it from the IdP's cross-site POST to the ACS: every SAML sign-in would fail.
    configure(cookie_attributes={"same_site": "strict"})
    saml_provider("acme-saml")
    response = browser.api_post("/sign-in/sso", {"providerId": "acme-saml", "callbackURL": "/dashboard"})
    assert response.cookies["auth.relay_state"]["samesite"] == "Lax"


def test_the_relay_state_is_the_stored_state_key_never_a_url(saml_provider, browser):
    saml_provider("acme-saml")
    url = browser.api_post("/sign-in/sso", {"providerId": "acme-saml", "callbackURL": "/dashboard"}).json()["url"]
    relay_state = parse_qs(urlsplit(url).query)["RelayState"][0]
    stored = json.loads(Verification.objects.get(identifier=row_identifier(relay_state)).value)
    assert stored["callbackURL"] == "/dashboard"
    assert stored["providerRef"]["providerId"] == "acme-saml"


def test_the_authn_request_id_is_stored_for_in_response_to_checks(saml_provider, browser):
    saml_provider("acme-saml")
    url = browser.api_post("/sign-in/sso", {"providerId": "acme-saml", "callbackURL": "/"}).json()["url"]
    request_id = _request_of(url)[0].get("ID")
    row = Verification.objects.get(identifier=f"saml-authn-request:{request_id}")
    value = json.loads(row.value)
    assert value["id"] == request_id and value["providerId"] == "acme-saml"
    assert value["providerRef"]["providerId"] == "acme-saml"
    lifetime = row.expires_at - timezone.now()
    assert timedelta(seconds=290) < lifetime <= timedelta(seconds=300)


def test_a_signed_authn_request_carries_sig_alg_and_signature_and_the_idp_accepts_it(saml_provider, browser):
    provider = saml_provider("acme-signed", sign_requests=True)
    url = provider.start(browser)
    query = parse_qs(urlsplit(url).query)
    assert query["SigAlg"] == ["http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"]
    assert query["Signature"][0]
    # samlify verifies the redirect signature against the certificate of our SP metadata.
    form = provider.idp.login(url, user_for())
    assert post_acs(browser, "acme-signed", form.saml_response, form.relay_state).status_code == 302
    assert session_user(browser)["email"] == "ada@acme.com"


def test_a_tampered_signed_authn_request_is_refused_by_the_idp(saml_provider, browser):
    import requests

    provider = saml_provider("acme-signed", sign_requests=True)
    url = provider.start(browser)
    tampered = url.replace("RelayState=", "RelayState=x", 1)
    assert requests.get(tampered, headers={"X-Login": json.dumps(user_for())}, timeout=10).status_code != 200


def test_signed_requests_without_a_private_key_are_refused(saml_provider, browser):
    saml_provider("acme-nokey", authnRequestsSigned=True)
    response = browser.api_post("/sign-in/sso", {"providerId": "acme-nokey", "callbackURL": "/"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "SAML_SIGNING_KEY_MISSING"


def test_additional_params_are_refused_for_saml(saml_provider, browser):
    saml_provider("acme-saml")
    response = browser.api_post("/sign-in/sso", {"providerId": "acme-saml", "callbackURL": "/",
                                                 "additionalParams": {"foo": "bar"}})
    assert response.status_code == 400
    assert error_of(response)["code"] == "SAML_ADDITIONAL_PARAMS_UNSUPPORTED"


def test_sign_in_by_email_domain_finds_the_saml_provider(saml_provider, browser):
    saml_provider("acme-saml")
    response = browser.api_post("/sign-in/sso", {"email": "ada@acme.com", "callbackURL": "/"})
    assert response.status_code == 200
    assert "SAMLRequest=" in response.json()["url"]
