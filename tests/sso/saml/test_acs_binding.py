"""The response must be for this SP and this provider (sso.md §5 ACS steps 13-15, §10 rule 5): Audience,
Destination and bearer Recipient name us, the Issuer is the provider's IdP."""

from urllib.parse import parse_qs, urlsplit

from tests.conftest import BASE, ORIGIN
from tests.sso.saml.conftest import post_acs, session_user, user_for

AUDIENCE_MISMATCH = ("invalid_saml_response", "SAML assertion audience does not match this Service Provider")


def _post(provider, browser, user):
    form = provider.idp_response(browser, user)
    return post_acs(browser, provider.provider_id, form.saml_response, form.relay_state)


def _error(response):
    query = parse_qs(urlsplit(response["Location"]).query)
    return query.get("error", [None])[0], query.get("error_description", [None])[0]


def test_the_configured_audience_is_accepted(saml_provider, browser):
    provider = saml_provider("acme-aud", audience="urn:acme:audience")
    response = _post(provider, browser, user_for(overrides={"Audience": "urn:acme:audience"}))
    assert response["Location"] == "/dashboard"


def test_the_sp_entity_id_is_accepted_when_an_audience_is_configured(saml_provider, browser):
    provider = saml_provider("acme-aud", audience="urn:acme:audience")
    assert _post(provider, browser, user_for())["Location"] == "/dashboard"


def test_another_audience_is_refused(saml_provider, browser):
    provider = saml_provider("acme-saml")
    response = _post(provider, browser, user_for(overrides={"Audience": "https://other-sp.test"}))
    assert _error(response) == AUDIENCE_MISMATCH
    assert session_user(browser) is None


def test_another_audience_is_refused_when_an_audience_is_configured(saml_provider, browser):
    provider = saml_provider("acme-aud", audience="urn:acme:audience")
    response = _post(provider, browser, user_for(overrides={"Audience": "https://other-sp.test"}))
    assert _error(response) == AUDIENCE_MISMATCH


def test_a_recipient_of_the_alias_path_is_accepted(saml_provider, browser):
    provider = saml_provider("acme-saml")
    alias = f"{ORIGIN}{BASE}/sso/saml2/sp/acs/acme-saml"
    response = _post(provider, browser, user_for(overrides={"SubjectRecipient": alias, "Destination": alias}))
    assert response["Location"] == "/dashboard"


def test_a_recipient_of_another_sp_is_refused(saml_provider, browser):
    provider = saml_provider("acme-saml")
    response = _post(provider, browser, user_for(overrides={"SubjectRecipient": "https://other-sp.test/acs"}))
    assert _error(response) == ("invalid_saml_response",
                                "SAML assertion recipient does not match this Service Provider")


def test_a_destination_of_another_sp_is_refused(saml_provider, browser):
    provider = saml_provider("acme-saml")
    response = _post(provider, browser, user_for(overrides={"Destination": "https://other-sp.test/acs"}))
    assert _error(response) == ("invalid_saml_response",
                                "SAML response destination does not match this Service Provider")
    assert session_user(browser) is None


def test_a_response_without_destination_is_accepted(saml_provider, browser):
    provider = saml_provider("acme-saml")
    assert _post(provider, browser, user_for(overrides={"Destination": None}))["Location"] == "/dashboard"


def test_an_issuer_other_than_the_providers_idp_is_refused(saml_provider, browser):
    provider = saml_provider("acme-saml")
    response = _post(provider, browser, user_for(overrides={"Issuer": "https://another-idp.test"}))
    assert _error(response)[0] == "saml_error"
    assert session_user(browser) is None
