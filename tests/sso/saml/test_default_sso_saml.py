"""A SAML provider defined in settings (``AUTHSERVICE_SSO["default_sso"]``, sso.default_providers): the SP
metadata, sign-in and the ACS find it without a database row; Single Logout is for stored providers."""

from authservice.models import Account
from tests.sso.saml.conftest import post_acs, session_user, user_for


def move_to_settings(provider, configure_sso):
    """The registered provider's configuration as a default_sso item, and its row gone."""
    record = provider.record
    configure_sso(default_sso=[{"providerId": record.provider_id, "domain": record.domain,
                                "issuer": record.issuer, "samlConfig": record.saml_config}])
    record.delete()


def test_a_saml_provider_from_settings_signs_in_through_the_acs(saml_provider, browser, configure_sso):
    provider = saml_provider("acme-saml")
    move_to_settings(provider, configure_sso)
    form = provider.idp_response(browser, user_for())
    response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    assert response["Location"] == "/dashboard", response.get("Location")
    assert session_user(browser)["email"] == "ada@acme.com"
    assert Account.objects.filter(provider_id="acme-saml", account_id="ada@acme.com").exists()


def test_the_sp_metadata_of_a_saml_provider_from_settings_is_served(saml_provider, api, configure_sso):
    move_to_settings(saml_provider("acme-saml"), configure_sso)
    response = api.api_get("/sso/saml2/sp/metadata", {"providerId": "acme-saml", "format": "xml"})
    assert response.status_code == 200 and b"/sso/saml2/callback/acme-saml" in response.content


def test_a_saml_provider_from_settings_keeps_no_single_logout_session(saml_provider, browser, configure_sso):
    from sso.models import SamlSession
    configure_sso(saml={"enable_single_logout": True})
    provider = saml_provider("acme-saml")
    move_to_settings(provider, configure_sso)
    form = provider.idp_response(browser, user_for())
    assert post_acs(browser, "acme-saml", form.saml_response, form.relay_state)["Location"] == "/dashboard"
    assert not SamlSession.objects.exists()
