"""Sign in with Apple: form_post callback, client secret as given (a JWT the deployment signs),
profile from the ID token plus the ``user`` JSON Apple posts on the first authorization only."""

import json

from authservice.social.base import ProviderError
from authservice.social.oidc import OIDCProvider


class AppleProvider(OIDCProvider):
    name = "Apple"
    authorization_endpoint = "https://appleid.apple.com/auth/authorize"
    token_endpoint = "https://appleid.apple.com/auth/token"
    jwks_uri = "https://appleid.apple.com/auth/keys"
    issuer = "https://appleid.apple.com"
    default_scopes = ("email", "name")
    response_type = "code id_token"
    response_mode = "form_post"
    nonce_may_be_hashed = True

    def audiences(self):
        # A native app's tokens are issued to its bundle id, a web sign-in's to the service id.
        bundle = self.config.get("appBundleIdentifier")
        return super().audiences() + ([bundle] if bundle else [])

    def fetch_profile(self, tokens, nonce=None, user_data=None):
        if not tokens.id_token:
            raise ProviderError("apple: no id_token")
        return self.map_claims(self.verify_id_token(tokens.id_token, nonce), user_data)

    def map_claims(self, claims, user_data=None):
        profile = super().map_claims(claims)
        if isinstance(user_data, str):
            try:
                user_data = json.loads(user_data)
            except ValueError:
                user_data = None
        name = (user_data or {}).get("name") if isinstance(user_data, dict) else None
        if isinstance(name, dict):
            full = f"{name.get('firstName') or ''} {name.get('lastName') or ''}".strip()
            profile.name = full or profile.name
        return profile
