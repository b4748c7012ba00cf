"""Google (OpenID Connect with fixed endpoints; ID tokens verified against Google's JWKS)."""

from authservice.social.base import ProviderError
from authservice.social.oidc import OIDCProvider


class GoogleProvider(OIDCProvider):
    name = "Google"
    authorization_endpoint = "https://accounts.google.com/o/oauth2/v2/auth"
    token_endpoint = "https://oauth2.googleapis.com/token"
    userinfo_endpoint = "https://openidconnect.googleapis.com/v1/userinfo"
    jwks_uri = "https://www.googleapis.com/oauth2/v3/certs"
    issuer = "https://accounts.google.com"
    issuer_aliases = ("accounts.google.com",)
    default_scopes = ("email", "profile", "openid")
    id_token_algorithms = ("RS256",)

    def extra_authorize_params(self):
        params = super().extra_authorize_params()
        if self.config.get("includeGrantedScopes", True) is not False:
            params["include_granted_scopes"] = "true"
        for option, key in (("accessType", "access_type"), ("display", "display"), ("hd", "hd")):
            if self.config.get(option):
                params[key] = self.config[option]
        return params

    def check_claims(self, claims, nonce):
        super().check_claims(claims, nonce)
        hosted_domain = self.config.get("hd")
        # A Workspace restriction must hold in the signed token, not only in the authorize URL.
        if hosted_domain and not (claims.get("hd") and hosted_domain in ("*", claims.get("hd"))):
            raise ProviderError("google: hosted domain not allowed")
