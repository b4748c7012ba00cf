"""ACS failures (sso.md §5 "ACS", §9): each a 302 with the spec's error and error_description (JSON only for
an unknown provider or an unverified domain), never a 500, and never a session or a new user."""

import base64
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model

from sso.models import SsoProvider
from sso.state import row_identifier
from tests.conftest import BASE, ORIGIN, error_of
from tests.sso.saml.conftest import FORM, acs_path, post_acs, session_user, user_for

B64 = base64.b64encode


def _error(response):
    assert response.status_code == 302, response.content
    query = parse_qs(urlsplit(response["Location"]).query)
    return query.get("error", [None])[0], query.get("error_description", [None])[0]


def _nobody(browser):
    assert session_user(browser) is None
    assert not get_user_model().objects.filter(email="ada@acme.com").exists()


@pytest.fixture
def provider(saml_provider):
    return saml_provider("acme-saml")


def test_a_response_over_max_response_size_redirects_with_saml_error(provider, browser):
    response = post_acs(browser, "acme-saml", "A" * (256 * 1024 + 4))
    assert response["Location"] == (f"{ORIGIN}/?error=saml_error&error_description=SAML+response+exceeds+"
                                    "maximum+allowed+size+%28262144+bytes%29")
    _nobody(browser)


def test_the_size_check_runs_before_the_relay_state_is_read(provider, browser):
    from authservice.models import Verification

    form = provider.idp_response(browser, user_for())
    response = post_acs(browser, "acme-saml", form.saml_response + "A" * (300 * 1024), form.relay_state)
    assert _error(response)[0] == "saml_error"
    assert urlsplit(response["Location"]).path == "/"  # no RelayState: the app origin, not its errorURL
    assert Verification.objects.filter(identifier=row_identifier(form.relay_state)).exists()


def test_a_body_over_django_upload_limit_is_413_json(provider, browser, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = post_acs(browser, "acme-saml", "A" * 4096)
    assert response.status_code == 413
    assert error_of(response)["code"] == "PAYLOAD_TOO_LARGE"


@pytest.mark.parametrize("value", ["not base64 at all!!", B64(b"no angle bracket here").decode(), ""])
def test_undecodable_responses_are_saml_invalid_encoding(provider, browser, value):
    response = post_acs(browser, "acme-saml", value or " ")
    assert _error(response) == ("saml_invalid_encoding", "Invalid base64-encoded SAML response")


@pytest.mark.parametrize("xml", [
    b"<samlp:Response",
    b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x "y">]><r>&x;</r>',
    b'<!DOCTYPE r SYSTEM "http://127.0.0.1:9/x.dtd"><r/>',
    b"<just-some-xml/>",
])
def test_unparseable_xml_or_a_doctype_is_saml_invalid_xml(provider, browser, xml):
    response = post_acs(browser, "acme-saml", B64(xml).decode())
    assert _error(response)[0] == "saml_invalid_xml"
    _nobody(browser)


def test_a_response_without_assertion_is_saml_no_assertion(provider, browser):
    xml = (b'<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r" Version="2.0" '
           b'IssueInstant="2024-01-01T00:00:00Z"><samlp:Status><samlp:StatusCode '
           b'Value="urn:oasis:names:tc:SAML:2.0:status:Responder"/></samlp:Status></samlp:Response>')
    assert _error(post_acs(browser, "acme-saml", B64(xml).decode()))[0] == "saml_no_assertion"


def test_a_non_success_status_is_saml_error(provider, browser):
    user = user_for(overrides={"StatusCode": "urn:oasis:names:tc:SAML:2.0:status:Requester"})
    form = provider.idp_response(browser, user)
    response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    assert _error(response)[0] == "saml_error"
    assert urlsplit(response["Location"]).path == f"{BASE}/error"
    _nobody(browser)


def test_a_missing_saml_response_is_a_validation_error(provider, browser):
    response = browser.post(acs_path("acme-saml"), "RelayState=x", content_type=FORM)
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_an_unknown_provider_is_404_json(db, browser):
    response = post_acs(browser, "nope", B64(b"<x/>").decode())
    assert response.status_code == 404
    assert error_of(response) == {"message": "No SAML provider found", "code": "SAML_PROVIDER_NOT_FOUND",
                                  "status": 404}


def test_an_unverified_provider_domain_is_401_json(provider, browser):
    form = provider.idp_response(browser, user_for())
    unverified = SsoProvider.objects.get(provider_id="acme-saml")
    unverified.domain_verified = False  # save() un-verifies every domain row, as the admin does
    unverified.save()
    response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    assert response.status_code == 401
    assert error_of(response)["code"] == "DOMAIN_NOT_VERIFIED"
    _nobody(browser)


def test_the_acs_takes_posts_from_any_origin(provider, browser):
    form = provider.idp_response(browser, user_for())
    response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state, origin="https://evil.test")
    assert response["Location"] == "/dashboard"


def test_the_acs_also_takes_a_json_body(provider, browser):
    form = provider.idp_response(browser, user_for())
    response = browser.api_post("/sso/saml2/callback/acme-saml",
                                {"SAMLResponse": form.saml_response, "RelayState": form.relay_state})
    assert response["Location"] == "/dashboard"


def test_the_same_assertion_posted_twice_is_a_replay(saml_provider, browser, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True})
    provider = saml_provider("acme-saml")
    form = provider.idp_initiated(user_for())
    assert post_acs(browser, "acme-saml", form.saml_response)["Location"] == ORIGIN
    again = type(browser)()
    response = post_acs(again, "acme-saml", form.saml_response)
    assert _error(response) == ("replay_detected", "SAML assertion has already been used")
    assert session_user(again) is None


def test_replay_is_detected_with_in_response_to_validation_off(provider, browser, configure_sso):
    configure_sso(saml={"enable_in_response_to_validation": False})
    form = provider.idp_response(browser, user_for())
    assert post_acs(browser, "acme-saml", form.saml_response)["Location"] == ORIGIN
    assert _error(post_acs(type(browser)(), "acme-saml", form.saml_response))[0] == "replay_detected"


def test_the_replay_tombstone_lives_until_not_on_or_after_plus_skew(provider, browser):
    from django.utils import timezone

    from sso.models import SamlUsedAssertion

    form = provider.idp_response(browser, user_for(notOnOrAfter=600))
    post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    [tombstone] = SamlUsedAssertion.objects.all()
    assert tombstone.identifier.startswith("saml-used-assertion:_")
    remaining = (tombstone.expires_at - timezone.now()).total_seconds()
    assert 600 + 300 - 15 < remaining <= 600 + 300


# --- RelayState --------------------------------------------------------------------------------
def test_an_unknown_relay_state_is_invalid_state(provider, browser):
    form = provider.idp_response(browser, user_for())
    response = post_acs(browser, "acme-saml", form.saml_response, "x" * 32)
    assert _error(response) == ("invalid_state", "invalid_or_expired_relay_state")
    _nobody(browser)


def test_a_relay_state_of_another_provider_is_refused(saml_provider, browser, configure_sso):
    configure_sso(saml={"enable_in_response_to_validation": False})
    provider = saml_provider("acme-saml")
    saml_provider("acme-two", domain="two.acme.com")
    form = provider.idp_response(browser, user_for())
    other_state = provider.idp.login(
        browser.api_post("/sign-in/sso", {"providerId": "acme-two", "callbackURL": "/two"}).json()["url"],
        user_for()).relay_state
    response = post_acs(browser, "acme-saml", form.saml_response, other_state)
    assert _error(response) == ("invalid_state", "sso_provider_reference_mismatch")
    assert urlsplit(response["Location"]).path == f"{BASE}/error"
    _nobody(browser)


def test_a_provider_changed_during_sign_in_is_refused(provider, browser):
    form = provider.idp_response(browser, user_for())
    record = provider.refresh()
    record.saml_config = {**record.saml_config, "callbackUrl": "/changed"}
    record.save()
    response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    assert _error(response) == ("invalid_state", "sso_provider_changed_during_authentication")
    _nobody(browser)


def test_errors_go_to_the_error_callback_url_of_the_relay_state(provider, browser):
    form = provider.idp_response(browser, user_for(overrides={"StatusCode": "urn:oasis:names:tc:SAML:2.0:status:Responder"}),
                                 errorCallbackURL="/login?failed=1")
    response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    assert response["Location"].startswith("/login?failed=1&error=saml_error&error_description=")


# --- GET on the ACS ------------------------------------------------------------------------------
def test_get_on_the_acs_with_a_session_redirects_to_a_safe_relay_state(provider, saml_owner):
    response = saml_owner.get(acs_path("acme-saml"), {"RelayState": "/welcome"})
    assert response.status_code == 302 and response["Location"] == "/welcome"


@pytest.mark.parametrize("relay_state", ["https://evil.test/", "//evil.test", "/\\evil.test", "javascript:alert(1)",
                                         f"{BASE}/sso/saml2/callback/acme-saml"])
def test_get_on_the_acs_never_redirects_to_an_unsafe_relay_state(provider, saml_owner, relay_state):
    response = saml_owner.get(acs_path("acme-saml"), {"RelayState": relay_state})
    assert response["Location"] == ORIGIN


def test_get_on_the_acs_without_a_session_goes_to_the_error_page(provider, browser):
    response = browser.get(acs_path("acme-saml", alias=True), {"RelayState": "/welcome"})
    assert response.status_code == 302
    assert response["Location"] == f"{ORIGIN}/error?error=invalid_request"


def test_expired_tombstones_and_requests_are_purged_at_the_next_sign_in(provider, browser):
    from datetime import timedelta

    from django.utils import timezone

    from authservice.models import Verification
    from sso.models import SamlUsedAssertion

    form = provider.idp_response(browser, user_for())
    post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    past = timezone.now() - timedelta(seconds=1)
    SamlUsedAssertion.objects.update(expires_at=past)
    Verification.objects.create(identifier="saml-authn-request:_old", value="{}", expires_at=past)
    provider.start(type(browser)())
    assert not SamlUsedAssertion.objects.exists()
    assert not Verification.objects.filter(identifier="saml-authn-request:_old").exists()
