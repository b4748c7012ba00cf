"""The ``saml`` options of the SSO plugin (sso.md §5 "Options and defaults"), each with its default and
its effect at the ACS, against responses issued by the samlify IdP."""

import base64
import json
import logging
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone

from authservice.models import Verification
from sso import app_settings
from tests.sso.saml.conftest import SHA1, post_acs, session_user, user_for

SHA1_SIGNATURE = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"


def _error(response):
    assert response.status_code == 302, response.content
    query = parse_qs(urlsplit(response["Location"]).query)
    return query.get("error", [None])[0], query.get("error_description", [None])[0]


def _post(provider, browser, form, relay_state=True):
    return post_acs(browser, provider.provider_id, form.saml_response, form.relay_state if relay_state else None)


def _signed_in(browser, response):
    assert response.status_code == 302
    assert "error=" not in response["Location"], response["Location"]
    return session_user(browser) is not None


def test_the_defaults_are_better_auths():
    saml = app_settings.saml
    assert saml.enable_in_response_to_validation is True
    assert saml.allow_idp_initiated is False
    assert saml.request_ttl == 300_000 and saml.clock_skew == 300_000
    assert saml.require_timestamps is False
    assert saml.algorithms.on_deprecated == "warn"
    assert saml.max_response_size == 262_144 and saml.max_metadata_size == 102_400


# --- enableInResponseToValidation -----------------------------------------------------------------
def test_in_response_to_must_name_a_stored_request(saml_provider, browser):
    provider = saml_provider("acme-saml")
    form = provider.idp_response(browser, user_for(overrides={"InResponseTo": "_never-issued"}))
    assert _error(_post(provider, browser, form)) == ("invalid_saml_response", "Unknown or expired request ID")
    assert session_user(browser) is None


def test_a_request_id_is_consumed_by_its_first_response(saml_provider, browser):
    provider = saml_provider("acme-saml")
    url = provider.start(browser)
    first = provider.idp.login(url, user_for())
    second = provider.idp.login(url, user_for())  # the IdP answers the same AuthnRequest again
    assert _signed_in(browser, _post(provider, browser, first))
    other = type(browser)()
    response = post_acs(other, "acme-saml", second.saml_response)
    assert _error(response) == ("invalid_saml_response", "Unknown or expired request ID")


def test_a_request_id_of_another_provider_is_refused(saml_provider, browser):
    provider = saml_provider("acme-saml")
    other = saml_provider("acme-two", domain="two.acme.com")
    other_url = other.start(browser)
    request_id = json.loads(Verification.objects.filter(identifier__startswith="saml-authn-request:")
                            .latest("created_at").value)["id"]
    assert request_id and other_url
    form = provider.idp_response(type(browser)(), user_for(overrides={"InResponseTo": request_id}))
    assert _error(_post(provider, browser, form, relay_state=False)) == ("invalid_saml_response",
                                                                        "Provider mismatch")
    assert Verification.objects.filter(identifier=f"saml-authn-request:{request_id}").exists()


def test_in_response_to_validation_off_stores_nothing_and_ignores_the_id(saml_provider, browser, configure_sso):
    configure_sso(saml={"enable_in_response_to_validation": False})
    provider = saml_provider("acme-saml")
    form = provider.idp_response(browser, user_for(overrides={"InResponseTo": "_never-issued"}))
    assert not Verification.objects.filter(identifier__startswith="saml-authn-request:").exists()
    assert _signed_in(browser, _post(provider, browser, form))


def test_in_response_to_validation_off_accepts_unsolicited_responses(saml_provider, browser, configure_sso):
    configure_sso(saml={"enable_in_response_to_validation": False})
    provider = saml_provider("acme-saml")
    assert _signed_in(browser, post_acs(browser, "acme-saml", provider.idp_initiated(user_for()).saml_response))


# --- allowIdpInitiated ------------------------------------------------------------------------------
def test_allow_idp_initiated_off_refuses_unsolicited_responses(saml_provider, browser):
    provider = saml_provider("acme-saml")
    response = post_acs(browser, "acme-saml", provider.idp_initiated(user_for()).saml_response)
    assert _error(response) == ("unsolicited_response", "IdP-initiated SSO not allowed")


def test_allow_idp_initiated_on_accepts_them(saml_provider, browser, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True})
    provider = saml_provider("acme-saml")
    assert _signed_in(browser, post_acs(browser, "acme-saml", provider.idp_initiated(user_for()).saml_response))


def test_allow_idp_initiated_does_not_admit_unknown_request_ids(saml_provider, browser, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True})
    provider = saml_provider("acme-saml")
    form = provider.idp_initiated(user_for(overrides={"InResponseTo": "_forged"}))
    assert _error(post_acs(browser, "acme-saml", form.saml_response))[1] == "Unknown or expired request ID"


# --- requestTTL ------------------------------------------------------------------------------------
def test_a_request_older_than_request_ttl_is_refused(saml_provider, browser):
    provider = saml_provider("acme-saml")
    form = provider.idp_response(browser, user_for())
    Verification.objects.filter(identifier__startswith="saml-authn-request:").update(
        expires_at=timezone.now() - timedelta(seconds=1))
    assert _error(_post(provider, browser, form)) == ("invalid_saml_response", "Unknown or expired request ID")


def test_request_ttl_sets_the_stored_expiry(saml_provider, browser, configure_sso):
    configure_sso(saml={"request_ttl": 60_000})
    saml_provider("acme-saml").start(browser)
    row = Verification.objects.get(identifier__startswith="saml-authn-request:")
    assert timedelta(seconds=50) < row.expires_at - timezone.now() <= timedelta(seconds=60)


# --- clockSkew -------------------------------------------------------------------------------------
EXPIRED_TWO_MINUTES_AGO = {"notBefore": -600, "notOnOrAfter": -120}


@pytest.mark.parametrize("timing", [{"notBefore": 120}, EXPIRED_TWO_MINUTES_AGO])
def test_the_default_clock_skew_tolerates_two_minutes(saml_provider, browser, timing):
    provider = saml_provider("acme-saml")
    assert _signed_in(browser, _post(provider, browser, provider.idp_response(browser, user_for(**timing))))


@pytest.mark.parametrize("timing, description", [({"notBefore": 120}, "SAML assertion is not yet valid"),
                                                 (EXPIRED_TWO_MINUTES_AGO, "SAML assertion has expired")])
def test_a_smaller_clock_skew_refuses_the_same_assertion(saml_provider, browser, configure_sso, timing,
                                                         description):
    configure_sso(saml={"clock_skew": 60_000})
    provider = saml_provider("acme-saml")
    response = _post(provider, browser, provider.idp_response(browser, user_for(**timing)))
    assert _error(response) == ("saml_error", description)
    assert session_user(browser) is None


def test_an_assertion_expired_beyond_the_skew_is_refused(saml_provider, browser):
    provider = saml_provider("acme-saml")
    response = _post(provider, browser, provider.idp_response(browser, user_for(notBefore=-900, notOnOrAfter=-600)))
    assert _error(response) == ("saml_error", "SAML assertion has expired")


# --- requireTimestamps -----------------------------------------------------------------------------
def test_an_assertion_without_timestamps_is_accepted_by_default(saml_provider, browser):
    provider = saml_provider("acme-saml")
    assert _signed_in(browser, _post(provider, browser, provider.idp_response(browser, user_for(omitTimes=True))))


def test_require_timestamps_refuses_an_assertion_without_them(saml_provider, browser, configure_sso):
    configure_sso(saml={"require_timestamps": True})
    provider = saml_provider("acme-saml")
    response = _post(provider, browser, provider.idp_response(browser, user_for(omitTimes=True)))
    assert _error(response) == ("saml_error", "SAML assertion is missing timestamps")


def test_require_timestamps_accepts_an_assertion_with_them(saml_provider, browser, configure_sso):
    configure_sso(saml={"require_timestamps": True})
    provider = saml_provider("acme-saml")
    assert _signed_in(browser, _post(provider, browser, provider.idp_response(browser, user_for())))


# --- algorithms.onDeprecated ------------------------------------------------------------------------
def _sha1_form(saml_provider, browser, **options):
    provider = saml_provider("acme-sha1", sig_alg=SHA1, **options)
    form = provider.idp_response(browser, user_for())
    assert SHA1_SIGNATURE in base64.b64decode(form.saml_response).decode()
    return provider, form


def test_on_deprecated_warn_accepts_a_sha1_response_and_logs(saml_provider, browser, caplog):
    provider, form = _sha1_form(saml_provider, browser)
    with caplog.at_level(logging.WARNING, logger="sso"):
        assert _signed_in(browser, _post(provider, browser, form))
    assert any("deprecated" in record.getMessage() and "rsa-sha1" in record.getMessage()
               for record in caplog.records)


def test_on_deprecated_reject_refuses_a_sha1_response(saml_provider, browser, configure_sso):
    configure_sso(saml={"algorithms": {"on_deprecated": "reject"}})
    provider, form = _sha1_form(saml_provider, browser)
    error, description = _error(_post(provider, browser, form))
    assert error == "saml_deprecated_algorithm" and "rsa-sha1" in description
    assert session_user(browser) is None


def test_on_deprecated_allow_accepts_silently(saml_provider, browser, configure_sso, caplog):
    configure_sso(saml={"algorithms": {"on_deprecated": "allow"}})
    provider, form = _sha1_form(saml_provider, browser)
    with caplog.at_level(logging.WARNING, logger="sso"):
        assert _signed_in(browser, _post(provider, browser, form))
    assert not [record for record in caplog.records if "deprecated" in record.getMessage()]


def test_a_signature_algorithm_outside_the_allow_list_is_refused(saml_provider, browser, configure_sso):
    configure_sso(saml={"algorithms": {"allowed_signature_algorithms": [
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"]}})
    provider = saml_provider("acme-saml")
    error, _ = _error(_post(provider, browser, provider.idp_response(browser, user_for())))
    assert error == "saml_algorithm_not_allowed"


def test_the_allow_list_admits_what_it_lists(saml_provider, browser, configure_sso):
    configure_sso(saml={"algorithms": {"allowed_signature_algorithms": [SHA1_SIGNATURE],
                                       "allowed_digest_algorithms": ["http://www.w3.org/2000/09/xmldsig#sha1"],
                                       "on_deprecated": "reject"}})
    provider, form = _sha1_form(saml_provider, browser)
    assert _signed_in(browser, _post(provider, browser, form))


# --- maxResponseSize ---------------------------------------------------------------------------------
def test_max_response_size_is_measured_on_the_base64_text(saml_provider, browser, configure_sso):
    provider = saml_provider("acme-saml")
    form = provider.idp_response(browser, user_for())
    configure_sso(saml={"max_response_size": len(form.saml_response) - 1})
    response = _post(provider, browser, form)
    limit = len(form.saml_response) - 1
    assert _error(response) == ("saml_error", f"SAML response exceeds maximum allowed size ({limit} bytes)")
    configure_sso(saml={"max_response_size": len(form.saml_response)})
    assert _signed_in(browser, _post(provider, browser, form))
