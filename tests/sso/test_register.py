"""POST /sso/register: the stored row, its defaults, secrets never returned, checks in the spec's order."""

import pytest

from django.utils import timezone
from sso.models import Member, Organization, SsoProvider, SsoProviderDomain
from tests.conftest import ApiClient, error_of
from tests.sso.bodies import oidc_body, skip_discovery_body

pytestmark = pytest.mark.django_db


def test_register_discovers_endpoints_and_answers_the_stored_row(sign_in, idp):
    idp.discovery()
    client = sign_in()
    response = client.api_post("/sso/register", oidc_body(idp.url))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["providerId"] == "acme"
    assert body["issuer"] == idp.url
    assert body["userId"] == client.user.pk
    assert body["organizationId"] is None
    assert body["samlConfig"] is None
    assert body["redirectURI"] == "http://127.0.0.1:8000/api/auth/sso/callback/acme"
    oidc = body["oidcConfig"]
    assert oidc["issuer"] == idp.url
    assert oidc["authorizationEndpoint"] == f"{idp.url}/authorize"
    assert oidc["tokenEndpoint"] == f"{idp.url}/token"
    assert oidc["jwksEndpoint"] == f"{idp.url}/jwks"
    assert oidc["userInfoEndpoint"] == f"{idp.url}/userinfo"
    assert oidc["discoveryEndpoint"] == f"{idp.url}/.well-known/openid-configuration"
    assert oidc["tokenEndpointAuthentication"] == "client_secret_basic"
    assert oidc["pkce"] is True


def test_register_never_returns_the_client_secret_but_stores_it(sign_in, idp):
    idp.discovery()
    response = sign_in().api_post("/sso/register", oidc_body(idp.url))
    assert "s3cr3t-value" not in response.content.decode()
    assert SsoProvider.objects.get(provider_id="acme").oidc_config["clientSecret"] == "s3cr3t-value"


def test_register_with_domain_verification_returns_a_token_stored_for_seven_days(sign_in, idp):
    idp.discovery()
    body = sign_in().api_post("/sso/register", oidc_body(idp.url)).json()
    assert body["domainVerified"] is False
    token = body["domainVerificationToken"]
    assert len(token) == 24
    row = SsoProviderDomain.objects.get(provider__provider_id="acme")
    assert row.token == token and row.status == "pending"
    assert 6.9 * 86400 < (row.token_expires_at - timezone.now()).total_seconds() <= 7 * 86400 + 1


def test_register_without_domain_verification_has_no_verification_fields(sign_in, idp, configure_sso):
    configure_sso(domain_verification={"enabled": False})
    idp.discovery()
    body = sign_in().api_post("/sso/register", oidc_body(idp.url)).json()
    assert "domainVerified" not in body and "domainVerificationToken" not in body


def test_explicit_endpoints_override_discovered_ones(sign_in, idp):
    idp.discovery()
    body = oidc_body(idp.url, oidc={"tokenEndpoint": f"{idp.url}/custom-token",
                                    "tokenEndpointAuthentication": "client_secret_post"})
    oidc = sign_in().api_post("/sso/register", body).json()["oidcConfig"]
    assert oidc["tokenEndpoint"] == f"{idp.url}/custom-token"
    assert oidc["authorizationEndpoint"] == f"{idp.url}/authorize"
    assert oidc["tokenEndpointAuthentication"] == "client_secret_post"


def test_relative_discovered_endpoints_keep_the_issuer_path(sign_in, idp):
    issuer = f"{idp.url}/tenant"
    idp.set("/tenant/.well-known/openid-configuration", {
        "issuer": issuer, "authorization_endpoint": "auth", "token_endpoint": "/token", "jwks_uri": "keys",
    })
    oidc = sign_in().api_post("/sso/register", oidc_body(issuer)).json()["oidcConfig"]
    assert oidc["authorizationEndpoint"] == f"{idp.url}/tenant/auth"
    assert oidc["tokenEndpoint"] == f"{idp.url}/tenant/token"
    assert oidc["jwksEndpoint"] == f"{idp.url}/tenant/keys"


def test_auth_method_falls_back_to_post_when_only_post_is_offered(sign_in, idp):
    idp.discovery(token_endpoint_auth_methods_supported=["client_secret_post"])
    oidc = sign_in().api_post("/sso/register", oidc_body(idp.url)).json()["oidcConfig"]
    assert oidc["tokenEndpointAuthentication"] == "client_secret_post"


def test_skip_discovery_stores_given_endpoints_and_defaults(sign_in, idp):
    response = sign_in().api_post("/sso/register", skip_discovery_body())
    assert response.status_code == 200, response.content
    oidc = response.json()["oidcConfig"]
    assert oidc["discoveryEndpoint"] == "https://idp.acme.com/.well-known/openid-configuration"
    assert oidc["tokenEndpointAuthentication"] == "client_secret_basic"
    assert oidc.get("userInfoEndpoint") is None
    assert idp.requests == []


def test_unauthenticated_register_is_401(db, idp):
    response = ApiClient().api_post("/sso/register", oidc_body(idp.url))
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHORIZED"


def test_invalid_issuer_url_is_a_validation_error(sign_in):
    response = sign_in().api_post("/sso/register", oidc_body("not a url"))
    assert response.status_code == 400
    assert error_of(response) == {"message": "[body.issuer] Invalid URL", "code": "VALIDATION_ERROR",
                                  "status": 400}


def test_missing_client_id_names_the_nested_field(sign_in):
    body = oidc_body("https://idp.acme.com")
    del body["oidcConfig"]["clientId"]
    error = error_of(sign_in().api_post("/sso/register", body))
    assert error["message"] == "[body.oidcConfig.clientId] Invalid input: expected string, received undefined"


def test_unknown_mapping_key_is_rejected(sign_in):
    body = skip_discovery_body(oidc={"mapping": {"email": "mail", "name": "cn", "emial": "x"}})
    response = sign_in().api_post("/sso/register", body)
    assert response.status_code == 400
    assert "[body.oidcConfig.mapping]" in error_of(response)["message"]


def test_limit_zero_disables_registration(sign_in, configure_sso):
    configure_sso(providers_limit=0)
    response = sign_in().api_post("/sso/register", skip_discovery_body())
    assert response.status_code == 403
    assert error_of(response)["code"] == "SSO_REGISTRATION_DISABLED"


def test_provider_limit_is_per_registering_user(sign_in, configure_sso):
    configure_sso(providers_limit=1)
    client = sign_in()
    assert client.api_post("/sso/register", skip_discovery_body("one")).status_code == 200
    response = client.api_post("/sso/register", skip_discovery_body("two"))
    assert response.status_code == 403
    assert error_of(response)["message"] == "You have reached the maximum number of SSO providers"
    assert sign_in("other@acme.com").api_post("/sso/register", skip_discovery_body("two")).status_code == 200


def test_duplicate_provider_id_is_422(sign_in):
    client = sign_in()
    client.api_post("/sso/register", skip_discovery_body())
    response = client.api_post("/sso/register", skip_discovery_body())
    assert response.status_code == 422
    assert error_of(response) == {"message": "SSO provider with this providerId already exists",
                                  "code": "PROVIDER_ID_EXISTS", "status": 422}


@pytest.mark.parametrize("provider_id", ["credential", "google", "magic-link"])
def test_reserved_provider_ids_are_refused(sign_in, provider_id):
    response = sign_in().api_post("/sso/register", skip_discovery_body(provider_id))
    assert response.status_code == 422
    assert error_of(response)["code"] == "PROVIDER_ID_RESERVED"


def test_trusted_provider_ids_are_reserved(sign_in, configure):
    configure(account_linking={"trusted_providers": ["corp"]})
    response = sign_in().api_post("/sso/register", skip_discovery_body("corp"))
    assert error_of(response)["code"] == "PROVIDER_ID_RESERVED"


def test_organization_provider_needs_membership(sign_in):
    org = Organization.objects.create(name="Acme", slug="acme")
    response = sign_in().api_post("/sso/register", skip_discovery_body(organizationId=org.pk))
    assert response.status_code == 400
    assert error_of(response)["code"] == "NOT_ORGANIZATION_MEMBER"


def test_organization_provider_needs_owner_or_admin(sign_in):
    client = sign_in()
    org = Organization.objects.create(name="Acme", slug="acme")
    Member.objects.create(organization=org, user=client.user, role="member")
    response = client.api_post("/sso/register", skip_discovery_body(organizationId=org.pk))
    assert response.status_code == 403
    assert error_of(response)["code"] == "ORGANIZATION_ADMIN_REQUIRED"


def test_organization_admin_registers_for_the_organization(sign_in):
    client = sign_in()
    org = Organization.objects.create(name="Acme", slug="acme")
    Member.objects.create(organization=org, user=client.user, role="member,admin")
    response = client.api_post("/sso/register", skip_discovery_body(organizationId=org.pk))
    assert response.status_code == 200
    assert response.json()["organizationId"] == org.pk


def test_membership_is_checked_before_the_provider_id(sign_in):
    client = sign_in()
    client.api_post("/sso/register", skip_discovery_body())
    response = client.api_post("/sso/register", skip_discovery_body(organizationId="nope"))
    assert error_of(response)["code"] == "NOT_ORGANIZATION_MEMBER"


def test_non_http_endpoint_is_discovery_invalid_url(sign_in):
    body = skip_discovery_body(oidc={"tokenEndpoint": "ftp://idp.acme.com/token"})
    response = sign_in().api_post("/sso/register", body)
    assert response.status_code == 400
    assert error_of(response)["code"] == "discovery_invalid_url"


@pytest.mark.parametrize("url", ["http://127.0.0.1:9999/token", "http://10.0.0.5/token", "http://localhost/token",
                                 "http://[::1]/token", "http://169.254.169.254/latest"])
def test_private_endpoint_host_is_refused(sign_in, url):
    response = sign_in().api_post("/sso/register", skip_discovery_body(oidc={"tokenEndpoint": url}))
    assert response.status_code == 400
    assert error_of(response)["code"] == "discovery_private_host"
    assert not SsoProvider.objects.exists()


def test_private_endpoint_host_is_allowed_when_its_origin_is_trusted(sign_in, configure):
    configure(trusted_origins=["http://127.0.0.1:9999"])
    body = skip_discovery_body(oidc={"tokenEndpoint": "http://127.0.0.1:9999/token"})
    assert sign_in().api_post("/sso/register", body).status_code == 200


def test_endpoint_safety_is_checked_before_discovery(sign_in, idp):
    idp.discovery()
    body = oidc_body(idp.url, oidc={"userInfoEndpoint": "http://192.168.1.1/userinfo"})
    response = sign_in().api_post("/sso/register", body)
    assert error_of(response)["code"] == "discovery_private_host"
    assert idp.requests == []


def test_basic_auth_without_client_secret_is_refused(sign_in):
    body = skip_discovery_body()
    del body["oidcConfig"]["clientSecret"]
    response = sign_in().api_post("/sso/register", body)
    assert response.status_code == 400
    assert error_of(response)["code"] == "CLIENT_SECRET_REQUIRED"


def test_private_key_jwt_without_a_key_source_is_refused(sign_in):
    body = skip_discovery_body(oidc={"tokenEndpointAuthentication": "private_key_jwt"})
    response = sign_in().api_post("/sso/register", body)
    assert response.status_code == 400
    assert error_of(response)["code"] == "PRIVATE_KEY_RESOLVER_REQUIRED"


def test_neither_config_is_a_validation_error(sign_in):
    body = skip_discovery_body()
    del body["oidcConfig"]
    response = sign_in().api_post("/sso/register", body)
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_in_process_register_takes_headers(sign_in):
    from authservice.api.server import auth

    client = sign_in()
    cookie = "; ".join(f"{m.key}={m.value}" for m in client.cookies.values())
    result = auth.api.register_sso_provider(body=skip_discovery_body(), headers={"cookie": cookie})
    assert result["providerId"] == "acme"
    assert "clientSecret" not in result["oidcConfig"]


def test_provider_id_over_255_characters_is_a_validation_error(sign_in):
    response = sign_in().api_post("/sso/register", skip_discovery_body("p" * 256))
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_nul_in_a_config_record_is_a_validation_error(sign_in):
    body = skip_discovery_body(oidc={"mapping": {"email": "e", "name": "n", "extraFields": {"a": "x\u0000"}}})
    assert error_of(sign_in().api_post("/sso/register", body))["code"] == "VALIDATION_ERROR"


def test_an_id_that_still_has_accounts_is_refused(sign_in, make_user):
    # A default_sso item the operator removed leaves its accounts behind: whoever registered its id
    # next would inherit their (provider, subject) links (attack pass 14d's fixer).
    from authservice.models import Account

    Account.objects.create(user=make_user(email="ada@corp.com"), provider_id="corp", account_id="ada-sub")
    response = sign_in().api_post("/sso/register", skip_discovery_body("corp"))
    assert response.status_code == 422 and error_of(response)["code"] == "PROVIDER_ID_RESERVED"
