"""Microsoft Entra ID (OpenID Connect, per tenant; ``common`` accepts any tenant's issuer)."""

from authservice.social.base import Profile, ProviderError, _email
from authservice.social.oidc import OIDCProvider

MULTI_TENANT = ("common", "organizations", "consumers")
CONSUMER_TENANT_ID = "9188040d-6c67-4c5b-b112-36a304b66dad"


class MicrosoftProvider(OIDCProvider):
    name = "Microsoft Entra ID"
    default_scopes = ("openid", "profile", "email", "User.Read", "offline_access")

    def __init__(self, provider_id, config):
        self.tenant = config.get("tenantId") or "common"
        self.authority = (config.get("authority") or "https://login.microsoftonline.com").rstrip("/")
        root = f"{self.authority}/{self.tenant}"
        self.authorization_endpoint = f"{root}/oauth2/v2.0/authorize"
        self.token_endpoint = f"{root}/oauth2/v2.0/token"
        self.jwks_uri = f"{root}/discovery/v2.0/keys"
        self.issuer = None if self.tenant in MULTI_TENANT else f"{root}/v2.0"
        super().__init__(provider_id, config)

    def issuer_is_dynamic(self):
        return True

    def check_claims(self, claims, nonce):
        super().check_claims(claims, nonce)
        tid = claims.get("tid")
        # The issuer must name the token's own tenant, and that tenant must fit the configured one.
        if not isinstance(tid, str) or claims.get("iss") != f"{self.authority}/{tid}/v2.0":
            raise ProviderError("microsoft: issuer does not match the token's tenant")
        if self.tenant not in MULTI_TENANT and tid != self.tenant:
            raise ProviderError("microsoft: token from another tenant")
        if (self.tenant == "organizations" and tid == CONSUMER_TENANT_ID) or (
                self.tenant == "consumers" and tid != CONSUMER_TENANT_ID):
            raise ProviderError("microsoft: account class not allowed")

    def map_claims(self, claims, user_data=None):
        subject = claims.get("oid") or claims.get("sub")
        if not subject:
            raise ProviderError("microsoft: no subject")
        email = claims.get("email") or claims.get("preferred_username")
        verified = claims.get("email_verified")
        if verified is None:
            verified = bool(email) and email in (claims.get("verified_primary_email") or []) + (
                claims.get("verified_secondary_email") or [])
        return Profile(account_id=str(subject), email=_email(email), email_verified=verified is True,
                       name=claims.get("name") or "", image=claims.get("picture"), raw=claims)
