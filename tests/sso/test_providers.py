"""Reading and changing providers: list, get, update, delete, and the access rule (sso.md §2)."""

import hashlib

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from authservice.models import Account
from sso.models import Member, Organization, SsoProvider, SsoProviderDomain
from tests.conftest import ApiClient, error_of
from tests.sso.bodies import saml_body, skip_discovery_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(sign_in):
    client = sign_in()
    assert client.api_post("/sso/register", skip_discovery_body()).status_code == 200
    return client


# --- get-provider ---------------------------------------------------------------------------------
def test_get_provider_is_sanitized(owner):
    response = owner.api_get("/sso/get-provider", {"providerId": "acme"})
    assert response.status_code == 200
    body = response.json()
    assert body["type"] == "oidc"
    assert body["domainVerified"] is False
    assert body["organizationId"] is None
    assert body["oidcConfig"]["clientIdLastFour"] == "****3456"
    assert "clientId" not in body["oidcConfig"] and "clientSecret" not in body["oidcConfig"]
    assert "s3cr3t" not in response.content.decode()
    assert body["spMetadataUrl"] == "http://127.0.0.1:8000/api/auth/sso/saml2/sp/metadata?providerId=acme"
    assert "samlConfig" not in body and "userId" not in body


def test_short_client_id_is_fully_masked(sign_in):
    client = sign_in()
    client.api_post("/sso/register", skip_discovery_body(oidc={"clientId": "abcd"}))
    body = client.api_get("/sso/get-provider", {"providerId": "acme"}).json()
    assert body["oidcConfig"]["clientIdLastFour"] == "****"


def test_unknown_provider_is_404(owner):
    response = owner.api_get("/sso/get-provider", {"providerId": "nope"})
    assert response.status_code == 404
    assert error_of(response) == {"message": "Provider not found", "code": "PROVIDER_NOT_FOUND", "status": 404}


def test_another_users_provider_is_403(owner, sign_in):
    response = sign_in("eve@evil.com").api_get("/sso/get-provider", {"providerId": "acme"})
    assert response.status_code == 403
    assert error_of(response)["code"] == "PROVIDER_ACCESS_DENIED"


def test_get_provider_needs_a_session(owner):
    assert ApiClient().api_get("/sso/get-provider", {"providerId": "acme"}).status_code == 401


def test_organization_provider_is_managed_by_its_admins_only(sign_in):
    admin, creator = sign_in("admin@acme.com"), sign_in()
    org = Organization.objects.create(name="Acme", slug="acme")
    Member.objects.create(organization=org, user=creator.user, role="owner")
    Member.objects.create(organization=org, user=admin.user, role="admin")
    creator.api_post("/sso/register", skip_discovery_body(organizationId=org.pk))
    assert admin.api_get("/sso/get-provider", {"providerId": "acme"}).status_code == 200
    Member.objects.filter(user=creator.user).update(role="member")
    response = creator.api_get("/sso/get-provider", {"providerId": "acme"})
    assert error_of(response)["code"] == "PROVIDER_ACCESS_DENIED"


# --- SAML basics -----------------------------------------------------------------------------------
def test_saml_provider_stores_config_and_never_returns_keys(sign_in, pem_cert):
    client = sign_in()
    response = client.api_post("/sso/register", saml_body(pem_cert))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["oidcConfig"] is None
    assert body["samlConfig"]["idpMetadata"] == {"entityID": "https://idp.acme.com/entity"}
    assert body["redirectURI"].endswith("/sso/callback/acme-saml")
    assert "PRIVATE KEY" not in response.content.decode()
    stored = SsoProvider.objects.get(provider_id="acme-saml").saml_config
    assert "privateKey" in stored["spMetadata"]


def test_saml_get_provider_summarises_the_certificate(sign_in, pem_cert):
    client = sign_in()
    client.api_post("/sso/register", saml_body(pem_cert))
    body = client.api_get("/sso/get-provider", {"providerId": "acme-saml"}).json()
    assert body["type"] == "saml"
    assert body["samlConfig"]["entryPoint"] == "https://idp.acme.com/sso"
    assert body["samlConfig"]["wantAssertionsSigned"] is True
    der = x509.load_pem_x509_certificate(pem_cert.encode()).public_bytes(Encoding.DER)
    digest = hashlib.sha256(der).hexdigest().upper()
    [summary] = body["samlConfig"]["certificate"]
    assert summary["fingerprintSha256"] == ":".join(digest[i:i + 2] for i in range(0, 64, 2))
    assert summary["notBefore"] == "Jan  2 03:04:05 2024 GMT"
    assert summary["notAfter"] == "Dec 31 14:34:47 2034 GMT"
    assert summary["publicKeyAlgorithm"] == "RSA"
    assert "PRIVATE KEY" not in str(body)


def test_saml_cert_that_is_not_pem_is_refused(sign_in):
    response = sign_in().api_post("/sso/register", saml_body("not a certificate"))
    assert response.status_code == 400
    assert not SsoProvider.objects.exists()


def test_saml_without_any_cert_source_is_cert_source_missing(sign_in):
    body = saml_body(None)
    del body["samlConfig"]["cert"]
    response = sign_in().api_post("/sso/register", body)
    assert error_of(response)["code"] == "CERT_SOURCE_MISSING"


def test_saml_entry_point_must_be_a_url(sign_in, pem_cert):
    response = sign_in().api_post("/sso/register", saml_body(pem_cert, entryPoint="nope"))
    assert error_of(response)["message"] == "[body.samlConfig.entryPoint] Invalid URL"


def test_saml_metadata_over_the_limit_is_refused(sign_in, pem_cert, configure_sso):
    configure_sso(saml={"max_metadata_size": 100})
    body = saml_body(pem_cert, idpMetadata={"metadata": "<x>" + "a" * 200 + "</x>"})
    response = sign_in().api_post("/sso/register", body)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "SAML_METADATA_TOO_LARGE"
    assert error["message"] == "IdP metadata exceeds maximum allowed size (100 bytes)"


# --- list ----------------------------------------------------------------------------------------
def test_list_holds_own_and_admin_organization_providers_only(sign_in, owner):
    org = Organization.objects.create(name="Acme", slug="acme")
    Member.objects.create(organization=org, user=owner.user, role="owner")
    other = sign_in("other@acme.com")
    Member.objects.create(organization=org, user=other.user, role="admin")
    other.api_post("/sso/register", skip_discovery_body("org-idp", organizationId=org.pk))
    other.api_post("/sso/register", skip_discovery_body("private-idp"))
    ids = [p["providerId"] for p in owner.api_get("/sso/providers").json()["providers"]]
    assert ids == ["acme", "org-idp"]


def test_list_is_not_truncated(sign_in, configure_sso):
    configure_sso(providers_limit=0)
    client = sign_in()
    for index in range(120):
        SsoProvider.objects.create(provider_id=f"p{index}", issuer="https://idp.acme.com", domain="acme.com",
                                   user=client.user, oidc_config={"clientId": "x"})
    assert len(client.api_get("/sso/providers").json()["providers"]) == 120


# --- update --------------------------------------------------------------------------------------
def test_update_without_fields_is_no_fields_to_update(owner):
    response = owner.api_post("/sso/update-provider", {"providerId": "acme"})
    assert response.status_code == 400
    assert error_of(response) == {"message": "No fields provided for update", "code": "NO_FIELDS_TO_UPDATE",
                                  "status": 400}


def test_update_changes_fields_and_answers_sanitized(owner):
    response = owner.api_post("/sso/update-provider", {
        "providerId": "acme", "oidcConfig": {"scopes": ["openid", "email"], "clientSecret": "new-secret"}})
    assert response.status_code == 200
    body = response.json()
    assert body["oidcConfig"]["scopes"] == ["openid", "email"]
    assert "new-secret" not in response.content.decode()
    assert SsoProvider.objects.get().oidc_config["clientSecret"] == "new-secret"


def test_changed_domain_resets_verification(owner):
    provider = SsoProvider.objects.get()
    provider.domain_verified = True  # through save(): every domain row verified, as the admin does
    provider.save()
    body = owner.api_post("/sso/update-provider", {"providerId": "acme", "domain": "acme.org"}).json()
    assert body["domain"] == "acme.org" and body["domainVerified"] is False


def test_the_routing_index_holds_the_normalised_domains_and_follows_an_update(owner):
    def indexed():
        return sorted(SsoProviderDomain.objects.values_list("domain", flat=True))

    assert indexed() == ["acme.com"]
    response = owner.api_post("/sso/update-provider",
                              {"providerId": "acme", "domain": "https://EU.acme.com/login, Bücher.example"})
    assert response.status_code == 200
    assert indexed() == ["eu.acme.com", "xn--bcher-kva.example"]


def test_an_update_to_an_invalid_domain_list_is_refused(owner):
    response = owner.api_post("/sso/update-provider", {"providerId": "acme", "domain": "acme.com, a b.com"})
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert SsoProvider.objects.get().domain == "acme.com"


def test_saml_update_to_an_oidc_provider_is_a_type_mismatch(owner, pem_cert):
    response = owner.api_post("/sso/update-provider", {
        "providerId": "acme", "samlConfig": {"entryPoint": "https://idp.acme.com/x"}})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "PROVIDER_CONFIG_TYPE_MISMATCH"
    assert error["message"] == "Cannot update SAML config for a provider that doesn't have SAML configured"


def test_identity_fields_are_locked_while_accounts_exist(owner):
    Account.objects.create(provider_id="acme", account_id="sub-1", user=owner.user)
    response = owner.api_post("/sso/update-provider", {"providerId": "acme", "issuer": "https://other.acme.com"})
    assert response.status_code == 409
    assert error_of(response)["code"] == "PROVIDER_IDENTITY_LOCKED"
    response = owner.api_post("/sso/update-provider", {"providerId": "acme", "oidcConfig": {"clientId": "new"}})
    assert response.status_code == 409


def test_non_identity_fields_stay_editable_while_accounts_exist(owner):
    Account.objects.create(provider_id="acme", account_id="sub-1", user=owner.user)
    response = owner.api_post("/sso/update-provider", {"providerId": "acme", "oidcConfig": {"pkce": False}})
    assert response.status_code == 200


def test_update_rechecks_endpoint_safety(owner):
    response = owner.api_post("/sso/update-provider", {
        "providerId": "acme", "oidcConfig": {"tokenEndpoint": "http://10.1.2.3/token"}})
    assert error_of(response)["code"] == "discovery_private_host"


def test_update_by_a_stranger_is_403(owner, sign_in):
    response = sign_in("eve@evil.com").api_post("/sso/update-provider", {"providerId": "acme", "domain": "x.com"})
    assert response.status_code == 403


def test_saml_update_merges_metadata_and_clears_idp_initiated_url(sign_in, pem_cert):
    client = sign_in()
    client.api_post("/sso/register", saml_body(pem_cert, idpInitiatedCallbackUrl="/welcome"))
    response = client.api_post("/sso/update-provider", {"providerId": "acme-saml", "samlConfig": {
        "idpMetadata": {"singleSignOnService": [{"Location": "https://idp.acme.com/sso2"}]},
        "idpInitiatedCallbackUrl": None}})
    assert response.status_code == 200, response.content
    stored = SsoProvider.objects.get().saml_config
    assert stored["idpMetadata"]["entityID"] == "https://idp.acme.com/entity"
    assert stored["idpMetadata"]["singleSignOnService"][0]["Location"] == "https://idp.acme.com/sso2"
    assert "idpInitiatedCallbackUrl" not in stored


# --- delete --------------------------------------------------------------------------------------
def test_delete_removes_the_provider_and_its_accounts_but_keeps_users(owner):
    Account.objects.create(provider_id="acme", account_id="sub-1", user=owner.user)
    response = owner.api_post("/sso/delete-provider", {"providerId": "acme"})
    assert response.status_code == 200
    assert response.json() == {"success": True}
    assert not SsoProvider.objects.exists()
    assert not Account.objects.filter(provider_id="acme").exists()
    owner.user.refresh_from_db()


def test_delete_removes_the_providers_routing_index(owner):
    assert owner.api_post("/sso/delete-provider", {"providerId": "acme"}).status_code == 200
    assert not SsoProviderDomain.objects.exists()


def test_delete_by_a_stranger_is_403_and_deletes_nothing(owner, sign_in):
    response = sign_in("eve@evil.com").api_post("/sso/delete-provider", {"providerId": "acme"})
    assert response.status_code == 403
    assert SsoProvider.objects.exists()


def test_delete_unknown_provider_is_404(owner):
    assert owner.api_post("/sso/delete-provider", {"providerId": "nope"}).status_code == 404
