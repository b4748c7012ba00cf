"""The SLO endpoints' answers before any message is exchanged (docs/saml-slo.md): switched off, unknown
provider, an IdP without SLO, no SP key, a session that SAML did not open, a bad callbackURL, no data.
None of these ends a session."""

import pytest

from tests.conftest import PASSWORD, ApiClient, error_of
from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    acme,
    alive,
    configure_sso,
    get_slo,
    saml_signed_in,
    slo_keys,
    slo_on,
)


@pytest.fixture
def ada(acme, make_user):
    return saml_signed_in(make_user, acme, "ada@acme.com", "_session-ada")


def logout(client, provider_id="acme", body=None):
    return client.api_post(f"/sso/saml2/logout/{provider_id}", body if body is not None else {})


def test_with_single_logout_off_both_endpoints_answer_400(ada, configure_sso):  # noqa: F811
    configure_sso(saml={"enable_single_logout": False})
    assert error_of(logout(ada)) == {"code": "SINGLE_LOGOUT_NOT_ENABLED", "message": "Single Logout is not enabled",
                                     "status": 400}
    assert error_of(get_slo("acme", "SAMLRequest=x"))["code"] == "SINGLE_LOGOUT_NOT_ENABLED"
    assert alive(ada)


def test_logout_needs_a_session(acme):
    assert logout(ApiClient()).status_code == 401


def test_an_unknown_provider_is_404(ada):
    assert error_of(logout(ada, "nobody"))["code"] == "SAML_PROVIDER_NOT_FOUND"
    assert error_of(get_slo("nobody", "SAMLRequest=x"))["code"] == "SAML_PROVIDER_NOT_FOUND"
    assert alive(ada)


def test_an_idp_without_a_single_logout_service_is_refused(ada, acme):
    acme.saml_config = {**acme.saml_config, "idpMetadata": {"entityID": "https://idp.example/acme"}}
    acme.save()
    assert error_of(logout(ada))["code"] == "IDP_SLO_NOT_SUPPORTED"
    assert alive(ada)


def test_without_an_sp_signing_key_nothing_unsigned_is_sent(ada, acme):
    acme.saml_config = {key: value for key, value in acme.saml_config.items() if key != "spMetadata"}
    acme.save()
    assert error_of(logout(ada))["code"] == "SAML_LOGOUT_SIGNING_KEY_MISSING"
    assert alive(ada)


def test_a_session_not_opened_by_this_provider_is_refused(acme, make_user):
    make_user(email="pat@acme.com", email_verified=True)
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": "pat@acme.com", "password": PASSWORD}).status_code == 200
    assert error_of(logout(client))["code"] == "SAML_LOGOUT_SESSION_NOT_SAML"
    assert client.api_get("/get-session").json() is not None


def test_an_untrusted_callback_url_is_refused(ada):
    assert error_of(logout(ada, body={"callbackURL": "https://evil.example/x"}))["code"] == "INVALID_CALLBACK_URL"
    assert alive(ada)


def test_logout_keeps_the_origin_check(ada):
    response = ada.api_post("/sso/saml2/logout/acme", {}, HTTP_ORIGIN="https://evil.example")
    assert response.status_code == 403
    assert alive(ada)


def test_the_slo_service_without_a_message_sends_the_browser_back_with_an_error(acme):
    response = get_slo("acme", "")
    assert response.status_code == 302
    assert response["Location"] == ("http://127.0.0.1:8000/?error=invalid_request"
                                    "&error_description=missing_logout_data")


def test_logout_without_a_callback_returns_to_the_base_url(ada):
    response = logout(ada)
    assert response.status_code == 302, response.content
    assert not alive(ada)
    assert response.cookies["auth.session_token"].value == ""


def test_an_idp_logout_request_sends_saml_logout_requested_and_session_revoked(ada, acme, slo_keys, tmp_path):
    from authservice import signals
    from sso import signals as sso_signals
    from tests.security.saml_slo_support import Message, idp_entity, post_form, post_slo, slo_url

    seen = []

    def on_logout(sender, **kwargs):
        seen.append(("saml_logout_requested", kwargs["provider"].pk, kwargs["name_id"], kwargs["session_indexes"],
                     [session.pk for session in kwargs["sessions"]]))

    def on_revoked(sender, **kwargs):
        seen.append(("session_revoked", kwargs["session"].pk))

    sso_signals.saml_logout_requested.connect(on_logout)
    signals.session_revoked.connect(on_revoked)
    try:
        message = Message(issuer=idp_entity("acme"), destination=slo_url("acme"))
        assert post_slo("acme", post_form(message, slo_keys["idp"], tmp_path)).status_code == 200
    finally:
        sso_signals.saml_logout_requested.disconnect(on_logout)
        signals.session_revoked.disconnect(on_revoked)
    pk = ada.session_row.pk
    assert seen == [("session_revoked", pk),
                    ("saml_logout_requested", acme.pk, "ada@acme.com", ["_session-ada"], [pk])]


def test_the_slo_service_runs_in_process_from_the_same_declaration(ada, slo_keys, tmp_path):
    from urllib.parse import parse_qs

    from authservice import auth
    from tests.security.saml_slo_support import Message, idp_entity, post_form, slo_url

    form = parse_qs(post_form(Message(issuer=idp_entity("acme"), destination=slo_url("acme")), slo_keys["idp"],
                              tmp_path))
    response = auth.api.saml_slo_post(body={"SAMLRequest": form["SAMLRequest"][0]}, params={"providerId": "acme"},
                                      as_response=True)
    assert response.status_code == 200
    assert b'name="SAMLResponse"' in response.content
    assert not alive(ada)


def test_the_redirect_binding_runs_in_process_with_the_query_as_given(ada, slo_keys):
    from urllib.parse import parse_qsl

    from authservice import auth
    from tests.security.saml_slo_support import Message, idp_entity, redirect_query, slo_url

    query = dict(parse_qsl(redirect_query(Message(issuer=idp_entity("acme"), destination=slo_url("acme")),
                                          slo_keys["idp"], relay_state="r")))
    response = auth.api.saml_slo_get(query=query, params={"providerId": "acme"}, as_response=True)
    assert response.status_code == 302, response.content
    assert not alive(ada)
