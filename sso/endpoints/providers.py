"""Provider management: register, list, get, update, delete (sso.md §2)."""

from rest_framework import serializers

from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.flows import sessions
from sso import domains, providers, wire
from sso.endpoints.domains import DomainList
from sso.inputs import (
    Choice,
    Object,
    OrganizationProvisioning,
    SamlIdpMetadataInput,
    SamlSpMetadataInput,
    StringOrList,
    Url,
)

AUTH_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt")


class OidcMappingInput(Object):
    strict = True  # a misspelt claim name must fail loudly, not map nothing

    id = inputs.String(required=False)
    email = inputs.String()
    name = inputs.String()
    emailVerified = inputs.String(required=False)
    image = inputs.String(required=False)
    extraFields = inputs.Record(required=False, values="string")  # {field: claim name}


class OidcConfigInput(Object):
    clientId = inputs.String(min_length=1)
    clientSecret = inputs.String(required=False)
    authorizationEndpoint = Url(required=False)
    tokenEndpoint = Url(required=False)
    userInfoEndpoint = Url(required=False)
    jwksEndpoint = Url(required=False)
    discoveryEndpoint = Url(required=False)
    tokenEndpointAuthentication = Choice(AUTH_METHODS, required=False)
    privateKeyId = inputs.String(required=False)
    privateKeyAlgorithm = inputs.String(required=False)
    skipDiscovery = inputs.Boolean(required=False)
    scopes = inputs.StringList(required=False)
    pkce = inputs.Boolean(required=False)
    mapping = OidcMappingInput(required=False)


class OidcConfigUpdateInput(OidcConfigInput):
    clientId = inputs.String(required=False, min_length=1)


class SamlMappingInput(Object):
    strict = True

    id = inputs.String(required=False)
    email = inputs.String()
    name = inputs.String()
    emailVerified = inputs.String(required=False)
    firstName = inputs.String(required=False)
    lastName = inputs.String(required=False)
    extraFields = inputs.Record(required=False, values="string")  # {field: claim name}


class SamlConfigInput(Object):
    """Every key the SAML code reads, typed (sso.md §2); other keys are stored as sent (no code reads them)."""

    keep_unknown = True

    entryPoint = Url()
    cert = StringOrList(required=False)
    audience = inputs.String(required=False)
    callbackUrl = inputs.String(required=False)
    idpInitiatedCallbackUrl = inputs.String(required=False, allow_null=True)
    idpMetadata = SamlIdpMetadataInput(required=False)
    spMetadata = SamlSpMetadataInput(required=False)
    wantAssertionsSigned = inputs.Boolean(required=False)
    authnRequestsSigned = inputs.Boolean(required=False)
    # Single Logout (docs/saml-slo.md): refuse the IdP's unsigned logout messages (default true).
    wantLogoutRequestSigned = inputs.Boolean(required=False)
    wantLogoutResponseSigned = inputs.Boolean(required=False)
    signatureAlgorithm = inputs.String(required=False)
    digestAlgorithm = inputs.String(required=False)
    identifierFormat = inputs.String(required=False)
    privateKey = inputs.String(required=False)
    privateKeyPass = inputs.String(required=False)
    mapping = SamlMappingInput(required=False)

    def validate_callbackUrl(self, value):  # noqa: N802 - DRF's hook name follows the field
        if "#" in value:
            raise serializers.ValidationError("callbackUrl must not contain a fragment")
        return value


class SamlConfigUpdateInput(SamlConfigInput):
    entryPoint = Url(required=False)


class RegisterInput(inputs.Input):
    # The column is varchar(255); the characters (one DNS label part, I1) are checked in the spec's
    # order by sso.providers._check_provider_id: 400 INVALID_PROVIDER_ID.
    providerId = inputs.String(min_length=1, max_length=255)
    issuer = Url()
    domain = DomainList()
    organizationId = inputs.String(required=False, max_length=32)  # the column is varchar(32)
    overrideUserInfo = inputs.Boolean(required=False)
    oidcConfig = OidcConfigInput(required=False)
    samlConfig = SamlConfigInput(required=False)
    # Roles from the IdP's groups (issue 14 §4, docs/sso-roles.md); null or absent = none.
    organizationProvisioning = OrganizationProvisioning(required=False)


@endpoint("POST", "/sso/register", name="register_sso_provider", body=RegisterInput, guard="session",
          summary="Register an OIDC or SAML provider", response="SsoProviderRegistered", tags=("sso",))
def register_sso_provider(ctx):
    provider, token = providers.register(sessions.get_session(ctx), ctx.body)
    return wire.registered(ctx, provider, token, verification_enabled=domains.enabled())


@endpoint("GET", "/sso/providers", name="list_sso_providers", guard="session", no_store=True,
          summary="Providers the caller may manage", response="SsoProviderList", tags=("sso",))
def list_sso_providers(ctx):
    found = sessions.get_session(ctx)
    return {"providers": [wire.sanitized(ctx, provider) for provider in providers.visible_to(found.user)]}


class ProviderIdQuery(inputs.Input):
    providerId = inputs.String()


@endpoint("GET", "/sso/get-provider", name="get_sso_provider", query=ProviderIdQuery, guard="session",
          no_store=True, summary="One provider, without secrets", response="SsoProvider", tags=("sso",))
def get_sso_provider(ctx):
    provider = providers.get_for(sessions.get_session(ctx).user, ctx.query["providerId"])
    return wire.sanitized(ctx, provider)


class UpdateInput(inputs.Input):
    providerId = inputs.String()
    issuer = Url(required=False)
    domain = DomainList(required=False)
    oidcConfig = OidcConfigUpdateInput(required=False)
    samlConfig = SamlConfigUpdateInput(required=False)
    # null removes the mapping.
    organizationProvisioning = OrganizationProvisioning(required=False)


@endpoint("POST", "/sso/update-provider", name="update_sso_provider", body=UpdateInput, guard="session",
          summary="Partially update a provider", response="SsoProvider", tags=("sso",))
def update_sso_provider(ctx):
    provider = providers.update(sessions.get_session(ctx), ctx.body)
    return wire.sanitized(ctx, provider)


class ProviderIdInput(inputs.Input):
    providerId = inputs.String()


@endpoint("POST", "/sso/delete-provider", name="delete_sso_provider", body=ProviderIdInput, guard="session",
          summary="Delete a provider and the accounts linked through it", response="Success", tags=("sso",))
def delete_sso_provider(ctx):
    providers.delete(sessions.get_session(ctx), ctx.body["providerId"])
    return {"success": True}
