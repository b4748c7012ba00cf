"""POST /sign-in/sso: provider lookup, URL checks, the authorization URL and the pending state (sso.md §3)."""

import base64
import hashlib
import json
from urllib.parse import parse_qsl, urlsplit

import pytest

from authservice import auth
from authservice.errors import APIError
from authservice.models import Verification
from sso.models import Organization, SsoProvider
from sso.state import row_identifier
from tests.conftest import error_of
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures

pytestmark = pytest.mark.django_db

IDP = "https://idp.acme.com"


def config(**changes):
    base = {"issuer": IDP, "clientId": "acme-client", "clientSecret": "s", "pkce": True,
            "authorizationEndpoint": f"{IDP}/authorize", "tokenEndpoint": f"{IDP}/token",
            "jwksEndpoint": f"{IDP}/jwks", "tokenEndpointAuthentication": "client_secret_basic"}
    base.update(changes)
    return {key: value for key, value in base.items() if value is not None}


@pytest.fixture
def acme(make_provider):
    return make_provider("acme", IDP, config(), domain="acme.com")


def sign_in(api, **body):
    body.setdefault("callbackURL", "/dashboard")
    return api.api_post("/sign-in/sso", body)


def params_of(response):
    assert response.status_code == 200, response.content
    return parse_qsl(urlsplit(response.json()["url"]).query)


def test_the_answer_is_the_authorization_url_as_json(api, acme):
    response = sign_in(api, providerId="acme")
    assert response.status_code == 200
    body = response.json()
    assert body["redirect"] is True
    assert body["url"].startswith(f"{IDP}/authorize?response_type=code&client_id=acme-client&state=")


def test_parameters_come_in_better_auths_order_with_pkce_and_nonce(api, acme):
    names = [name for name, _ in params_of(sign_in(api, providerId="acme"))]
    assert names == ["response_type", "client_id", "state", "scope", "redirect_uri",
                     "code_challenge_method", "code_challenge", "nonce"]


def test_the_scope_defaults_and_is_form_encoded(api, acme):
    response = sign_in(api, providerId="acme")
    assert "scope=openid+email+profile+offline_access" in response.json()["url"]


def test_request_scopes_win_over_config_scopes(api, make_provider):
    make_provider("acme", IDP, config(scopes=["openid", "groups"]))
    assert dict(params_of(sign_in(api, providerId="acme")))["scope"] == "openid groups"
    assert dict(params_of(sign_in(api, providerId="acme", scopes=["openid"])))["scope"] == "openid"


def test_the_redirect_uri_is_the_providers_callback(api, acme):
    params = dict(params_of(sign_in(api, providerId="acme")))
    assert params["redirect_uri"] == "http://127.0.0.1:8000/api/auth/sso/callback/acme"


def test_the_state_is_stored_with_the_pkce_verifier_and_provider_reference(api, acme):
    params = dict(params_of(sign_in(api, providerId="acme", errorCallbackURL="/oops",
                                    newUserCallbackURL="/welcome", requestSignUp=True)))
    state = params["state"]
    assert len(state) == 32
    assert set(state) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    value = json.loads(Verification.objects.get(identifier=row_identifier(state)).value)
    assert value["callbackURL"] == "/dashboard"
    assert value["errorURL"] == "/oops"
    assert value["newUserURL"] == "/welcome"
    assert value["requestSignUp"] is True
    assert value["nonce"] == params["nonce"]
    assert value["providerRef"] == {"providerId": "acme", "rowId": acme.pk, "fingerprint": acme.fingerprint()}
    verifier = value["codeVerifier"]
    assert len(verifier) == 128
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert params["code_challenge"] == challenge and len(challenge) == 43


def test_the_state_lives_ten_minutes(api, acme):
    state = dict(params_of(sign_in(api, providerId="acme")))["state"]
    row = Verification.objects.get(identifier=row_identifier(state))
    assert 590 <= (row.expires_at - row.created_at).total_seconds() <= 600


def test_the_signed_state_cookie_is_set(api, acme):
    response = sign_in(api, providerId="acme")
    cookie = response.cookies["auth.state"]
    assert cookie["max-age"] == 300
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["path"] == "/"
    state = dict(params_of(response))["state"]
    assert cookie.value.startswith(state + ".")


def test_every_sign_in_gets_fresh_state_nonce_and_challenge(api, acme):
    first = dict(params_of(sign_in(api, providerId="acme")))
    second = dict(params_of(sign_in(api, providerId="acme")))
    for name in ("state", "nonce", "code_challenge"):
        assert first[name] != second[name]


def test_pkce_can_be_turned_off_per_provider(api, make_provider):
    make_provider("acme", IDP, config(pkce=False))
    names = [name for name, _ in params_of(sign_in(api, providerId="acme"))]
    assert "code_challenge" not in names


# --- lookup ---------------------------------------------------------------------------------------------
def test_an_email_finds_the_provider_of_its_domain_and_becomes_the_login_hint(api, acme):
    params = dict(params_of(sign_in(api, email="ada@acme.com")))
    assert params["client_id"] == "acme-client"
    assert params["login_hint"] == "ada@acme.com"


def test_a_subdomain_email_finds_the_parent_domains_provider(api, acme):
    assert dict(params_of(sign_in(api, email="ada@eu.acme.com")))["client_id"] == "acme-client"


def test_a_domain_list_is_matched_case_insensitively(api, make_provider):
    make_provider("multi", IDP, config(clientId="multi-client"), domain="example.org, Acme.COM")
    assert dict(params_of(sign_in(api, domain="acme.com")))["client_id"] == "multi-client"


def test_the_most_specific_domain_wins(api, make_provider):
    make_provider("parent", IDP, config(clientId="parent"), domain="corp.com,other.com")
    make_provider("child", IDP, config(clientId="child"), domain="other.org,eu.corp.com")
    assert dict(params_of(sign_in(api, email="a@x.eu.corp.com")))["client_id"] == "child"


def test_the_longest_valid_email_and_the_deepest_valid_domain_are_routed(api, acme):
    assert params_of(sign_in(api, email="a@" + "a." * 122 + "acme.com"))  # 254 characters
    assert params_of(sign_in(api, domain="a." * 121 + "bb.acme.com"))  # 253 characters, 124 labels


def test_an_unverified_provider_is_not_found_by_domain(api, make_provider):
    make_provider("acme", IDP, config(), domain_verified=False)
    assert error_of(sign_in(api, email="ada@acme.com"))["code"] == "PROVIDER_NOT_FOUND"


def test_a_lookalike_domain_does_not_match(api, acme):
    response = sign_in(api, email="ada@notacme.com")
    assert response.status_code == 404


def test_sign_in_by_domain_sends_no_login_hint_unless_given(api, acme):
    assert "login_hint" not in dict(params_of(sign_in(api, domain="acme.com")))
    assert dict(params_of(sign_in(api, domain="acme.com", loginHint="ada")))["login_hint"] == "ada"


def test_provider_id_wins_over_the_email_domain(api, acme, make_provider):
    make_provider("other", IDP, config(clientId="other-client"), domain="other.com")
    assert dict(params_of(sign_in(api, providerId="other", email="ada@acme.com")))["client_id"] == "other-client"


def test_an_organization_slug_finds_its_provider(api, make_provider):
    org = Organization.objects.create(name="Acme", slug="acme-inc")
    make_provider("org-idp", IDP, config(clientId="org-client"), domain="acme.org", organization_id=org.pk)
    assert dict(params_of(sign_in(api, organizationSlug="acme-inc")))["client_id"] == "org-client"


def test_no_selector_is_sso_identifier_required(api):
    response = sign_in(api)
    assert response.status_code == 400
    assert error_of(response) == {"code": "SSO_IDENTIFIER_REQUIRED", "status": 400,
                                  "message": "email, organizationSlug, domain or providerId is required"}


def test_an_unknown_organization_slug_alone_is_sso_identifier_required(api):
    response = sign_in(api, organizationSlug="nobody")
    assert error_of(response)["message"] == "providerId, orgId or domain is required"


def test_an_unknown_organization_slug_falls_back_to_the_email(api, acme):
    assert dict(params_of(sign_in(api, organizationSlug="nobody", email="a@acme.com")))["client_id"] == "acme-client"


def test_an_unknown_provider_is_not_found(api):
    response = sign_in(api, providerId="nope")
    assert response.status_code == 404
    assert error_of(response) == {"code": "PROVIDER_NOT_FOUND", "status": 404,
                                  "message": "No provider found for the issuer"}


# --- gates and checks -----------------------------------------------------------------------------------
def test_an_unverified_domain_is_refused_and_stores_no_state(api, make_provider):
    make_provider("acme", IDP, config(), domain_verified=False)
    response = sign_in(api, providerId="acme")
    assert response.status_code == 401
    assert error_of(response)["code"] == "DOMAIN_NOT_VERIFIED"
    assert not Verification.objects.exists()
    assert "auth.state" not in response.cookies


def test_without_domain_verification_an_unverified_provider_signs_in(api, make_provider, configure_sso):
    configure_sso(domain_verification={"enabled": False})
    make_provider("acme", IDP, config(), domain_verified=False)
    assert sign_in(api, providerId="acme").status_code == 200


@pytest.mark.parametrize(("field", "code"), [
    ("callbackURL", "INVALID_CALLBACK_URL"),
    ("errorCallbackURL", "INVALID_ERROR_CALLBACK_URL"),
    ("newUserCallbackURL", "INVALID_NEW_USER_CALLBACK_URL"),
])
def test_an_untrusted_callback_url_is_refused(api, acme, field, code):
    response = sign_in(api, providerId="acme", **{field: "https://evil.example/x"})
    assert response.status_code == 403
    assert error_of(response)["code"] == code


@pytest.mark.parametrize("field", ["callbackURL", "errorCallbackURL", "newUserCallbackURL"])
def test_in_process_calls_check_the_callback_urls_too(acme, field):
    body = {"providerId": "acme", "callbackURL": "/d", field: "//evil.example"}
    with pytest.raises(APIError) as raised:
        auth.api.sign_in_sso(body=body)
    assert raised.value.status_code == 403


def test_reserved_additional_params_are_refused(api, acme):
    response = sign_in(api, providerId="acme", additionalParams={"state": "x", "prompt": "login", "nonce": "n"})
    assert response.status_code == 400
    assert error_of(response)["message"] == ("[body.additionalParams] additionalParams cannot include reserved "
                                             "OAuth parameters: state, nonce")


def test_other_additional_params_are_appended_last(api, acme):
    params = params_of(sign_in(api, providerId="acme", additionalParams={"prompt": "login", "hd": "acme.com"}))
    assert params[-2:] == [("prompt", "login"), ("hd", "acme.com")]


def test_callback_url_is_required(api, acme):
    response = api.api_post("/sign-in/sso", {"providerId": "acme"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_an_unknown_provider_type_is_a_validation_error(api, acme):
    response = sign_in(api, providerId="acme", providerType="ldap")
    assert error_of(response)["message"] == '[body.providerType] Invalid option: expected one of "oidc"|"saml"'


def test_asking_for_saml_from_an_oidc_provider_is_not_configured(api, acme):
    response = sign_in(api, providerId="acme", providerType="saml")
    assert response.status_code == 400
    assert error_of(response) == {"code": "PROVIDER_TYPE_NOT_CONFIGURED", "status": 400,
                                  "message": "SAML provider is not configured"}


def test_asking_for_oidc_from_a_saml_provider_is_not_configured(api, make_provider):
    provider = make_provider("saml-idp", "https://sp.acme.com", None)
    provider.saml_config = {"entryPoint": "https://idp.acme.com/sso", "cert": "x"}
    provider.save()
    response = sign_in(api, providerId="saml-idp", providerType="oidc")
    assert error_of(response)["message"] == "OIDC provider is not configured"


def test_additional_params_are_refused_for_saml_providers(api, make_provider):
    provider = make_provider("saml-idp", "https://sp.acme.com", None)
    provider.saml_config = {"entryPoint": "https://idp.acme.com/sso", "cert": "x"}
    provider.save()
    response = sign_in(api, providerId="saml-idp", additionalParams={"foo": "bar"})
    assert error_of(response)["code"] == "SAML_ADDITIONAL_PARAMS_UNSUPPORTED"


def test_missing_endpoints_are_discovered_and_untrusted_discovery_is_refused(api, make_provider):
    make_provider("acme", IDP, config(authorizationEndpoint=None))
    response = sign_in(api, providerId="acme")
    assert response.status_code == 400
    assert error_of(response)["code"] == "discovery_untrusted_origin"
    assert not Verification.objects.exists()


def test_the_in_process_form_answers_the_url(acme):
    result = auth.api.sign_in_sso(body={"providerId": "acme", "callbackURL": "/d"})
    assert result["redirect"] is True
    assert result["url"].startswith(f"{IDP}/authorize?")
    assert SsoProvider.objects.count() == 1
