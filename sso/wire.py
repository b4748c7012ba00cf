"""SSO records as they go over the wire (sso.md §2). Secrets never leave through here.

``registered`` is the answer of ``/sso/register`` (the stored row); ``sanitized`` is what every read
endpoint returns (get-provider, providers, update-provider).
"""

from urllib.parse import quote

from authservice import links
from sso import domains, saml_config
from sso.models import strip_secrets

OIDC_PUBLIC_KEYS = ("discoveryEndpoint", "pkce", "authorizationEndpoint", "tokenEndpoint", "userInfoEndpoint",
                    "jwksEndpoint", "scopes", "tokenEndpointAuthentication")
SAML_PUBLIC_KEYS = ("entryPoint", "callbackUrl", "idpInitiatedCallbackUrl", "audience", "wantAssertionsSigned",
                    "authnRequestsSigned", "identifierFormat", "signatureAlgorithm", "digestAlgorithm",
                    "wantLogoutRequestSigned", "wantLogoutResponseSigned")


def redirect_uri(ctx, provider_id):
    return f"{links.base(ctx)}/sso/callback/{provider_id}"


def mask_client_id(client_id):
    client_id = client_id or ""
    return "****" if len(client_id) <= 4 else "****" + client_id[-4:]


def registered(ctx, provider, token=None, verification_enabled=False):
    data = {
        "id": provider.pk,
        "providerId": provider.provider_id,
        "issuer": provider.issuer,
        "domain": provider.domain,
        "userId": str(provider.user_id),
        "organizationId": provider.organization_id,
        "oidcConfig": strip_secrets(provider.oidc_config),
        "samlConfig": strip_secrets(provider.saml_config),
        "redirectURI": redirect_uri(ctx, provider.provider_id),
    }
    if provider.organization_provisioning:
        data["organizationProvisioning"] = provider.organization_provisioning
    if verification_enabled:
        data["domainVerified"] = bool(provider.domain_verified)
        data["domainVerificationToken"] = token
        data["domains"] = domain_states(provider)
    return data


def domain_states(provider):
    """Each domain with its own state, token and TXT record name (issue 14 §3)."""
    return [domains.describe(provider, row) for row in domains.rows(provider)]


def _picked(config, keys):
    return {key: config[key] for key in keys if config.get(key) is not None}


def _oidc(config):
    data = {"discoveryEndpoint": config.get("discoveryEndpoint"),
            "clientIdLastFour": mask_client_id(config.get("clientId"))}
    data.update(_picked(config, OIDC_PUBLIC_KEYS))
    return {key: value for key, value in data.items() if value is not None}


def _saml(config):
    data = _picked(config, SAML_PUBLIC_KEYS)
    certificates = saml_config.certificates_of(config)
    if certificates:
        data["certificate"] = [saml_config.certificate_summary(cert) for cert in certificates]
    return data


def sanitized(ctx, provider):
    data = {
        "providerId": provider.provider_id,
        "type": provider.type,
        "issuer": provider.issuer,
        "domain": provider.domain,
        "organizationId": provider.organization_id or None,
        "domainVerified": bool(provider.domain_verified),
        "domains": domain_states(provider),
    }
    if provider.organization_provisioning:
        data["organizationProvisioning"] = provider.organization_provisioning
    if provider.oidc_config:
        data["oidcConfig"] = _oidc(provider.oidc_config)
    if provider.saml_config:
        data["samlConfig"] = _saml(provider.saml_config)
    data["spMetadataUrl"] = (f"{links.base(ctx)}/sso/saml2/sp/metadata?providerId="
                             f"{quote(provider.provider_id, safe='')}")
    return data
