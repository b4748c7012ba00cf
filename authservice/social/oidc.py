"""OpenID Connect: ID-token verification against the provider's JWKS, and the generic provider that
discovers its endpoints from an issuer (core.md §5.0, §5.3 steps 7 and 10).

Verification refuses ``alg: none`` and every HMAC algorithm (a public key must never serve as an HMAC
secret), checks ``iss``, ``aud``, ``azp``, ``exp`` and the nonce, and caches the JWKS in Django's cache
per provider, refetching once when a token names a key id the cache does not know (key rotation).
"""

import hashlib
import json
import logging

import jwt
import requests
from django.core.cache import cache

from authservice import origins, tokens
from authservice.social.base import OAuth2Provider, ProviderError, Profile, _email, _true

logger = logging.getLogger("authservice.social")

# Asymmetric algorithms only: never "none", never HS* (core.md §5.3 step 10).
ALLOWED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512",
                      "EdDSA")
JWKS_TTL = 3600
DISCOVERY_TTL = 3600
DISCOVERY_TIMEOUT = 5
LEEWAY = 30  # seconds of clock skew tolerated on exp/iat


class OIDCProvider(OAuth2Provider):
    """A provider whose ID tokens are verified (Google, Microsoft, Apple and generic OIDC entries)."""

    requires_nonce = True
    supports_id_token = True
    id_token_algorithms = ALLOWED_ALGORITHMS
    # Accepted ``iss`` values besides ``issuer`` (Google also issues "accounts.google.com").
    issuer_aliases = ()
    # Apple may put SHA-256(nonce) in the token instead of the nonce.
    nonce_may_be_hashed = False

    # --- verification ---------------------------------------------------------------------------
    def audiences(self):
        extra = self.config.get("audience") or []
        return [self.client_id] + ([extra] if isinstance(extra, str) else list(extra))

    def expected_issuers(self):
        issuer = self.get_endpoint("issuer")
        return [issuer, *self.issuer_aliases]

    def verify_id_token(self, token, nonce=None):
        """The verified claims of ``token``; raises ProviderError on any failure."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise ProviderError(f"{self.id}: ID token is not a JWS") from None
        alg = header.get("alg")
        if alg not in self.algorithms():
            raise ProviderError(f"{self.id}: ID token algorithm {alg!r} is not allowed")
        key = self._signing_key(header.get("kid"), alg)
        try:
            claims = jwt.decode(
                token, key=key, algorithms=[alg], audience=self.audiences(), leeway=LEEWAY,
                options={"require": ["iss", "sub", "aud", "exp", "iat"], "verify_iss": False},
            )
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise ProviderError(f"{self.id}: ID token rejected: {exc}") from None
        self.check_claims(claims, nonce)
        return claims

    def check_claims(self, claims, nonce):
        if not self.issuer_is_dynamic() and claims.get("iss") not in self.expected_issuers():
            raise ProviderError(f"{self.id}: ID token issuer {claims.get('iss')!r} is not expected")
        aud = claims.get("aud")
        azp = claims.get("azp")
        # OIDC Core 3.1.3.7: several audiences need an azp, and an azp must be us.
        if (isinstance(aud, list) and len(aud) > 1 and not azp) or (azp and azp != self.client_id):
            raise ProviderError(f"{self.id}: ID token azp does not name this client")
        if nonce is not None and not self._nonce_matches(claims.get("nonce"), nonce):
            raise ProviderError(f"{self.id}: ID token nonce mismatch")

    def issuer_is_dynamic(self):
        """True for providers that check ``iss`` themselves in :meth:`check_claims` (Microsoft)."""
        return False

    def _nonce_matches(self, claim, nonce):
        if not isinstance(claim, str):
            return False
        if tokens.constant_time_equals(claim, nonce):
            return True
        hashed = hashlib.sha256(nonce.encode()).hexdigest()
        return self.nonce_may_be_hashed and tokens.constant_time_equals(claim, hashed)

    def algorithms(self):
        return [alg for alg in self.id_token_algorithms if alg in ALLOWED_ALGORITHMS]

    # --- JWKS -----------------------------------------------------------------------------------
    def _jwks_cache_key(self, uri):
        return f"authservice:jwks:{self.id}:{hashlib.sha256(uri.encode()).hexdigest()[:16]}"

    def _jwks(self, refresh=False):
        uri = self.get_endpoint("jwks_uri")
        key = self._jwks_cache_key(uri)
        keys = None if refresh else cache.get(key)
        if keys is None:
            data = self.request_json("GET", uri)
            keys = data.get("keys") if isinstance(data, dict) else None
            if not isinstance(keys, list):
                raise ProviderError(f"{self.id}: JWKS has no keys")
            cache.set(key, keys, JWKS_TTL)
        return keys

    def _signing_key(self, kid, alg):
        keys = self._pick(self._jwks(), kid, alg)
        if not keys and kid is not None:
            keys = self._pick(self._jwks(refresh=True), kid, alg)  # rotated: refetch once
        if len(keys) != 1:
            raise ProviderError(f"{self.id}: no single JWKS key for kid {kid!r}")
        try:
            return jwt.PyJWK(keys[0], algorithm=alg).key
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise ProviderError(f"{self.id}: unusable JWKS key: {exc}") from None

    @staticmethod
    def _pick(keys, kid, alg):
        family = {"R": "RSA", "P": "RSA", "E": "EC"}.get(alg[0]) if alg != "EdDSA" else "OKP"
        found = []
        for jwk in keys:
            if not isinstance(jwk, dict) or jwk.get("kty") != family:
                continue
            if jwk.get("use") not in (None, "sig") or jwk.get("alg") not in (None, alg):
                continue
            if kid is not None and jwk.get("kid") != kid:
                continue
            found.append(jwk)
        return found

    # --- profile --------------------------------------------------------------------------------
    def fetch_profile(self, tokens_, nonce=None, user_data=None):
        """ID-token claims when they carry an e-mail, else the userinfo answer for the same subject."""
        if not tokens_.id_token:
            raise ProviderError(f"{self.id}: the token response has no id_token")
        claims = self.verify_id_token(tokens_.id_token, nonce)
        if claims.get("email") or not self.userinfo_endpoint or not tokens_.access_token:
            return self.map_claims(claims, user_data)
        info = self.request_json("GET", self.userinfo_endpoint,
                                 headers={"Authorization": f"Bearer {tokens_.access_token}"})
        # OIDC Core 5.3.2: userinfo about someone else must not be used.
        if not isinstance(info, dict) or info.get("sub") != claims.get("sub"):
            raise ProviderError(f"{self.id}: userinfo subject differs from the ID token's")
        return self.map_claims({**info, **{k: v for k, v in claims.items() if k not in info}}, user_data)

    def profile_from_claims(self, claims, user_data=None):
        """The profile of an ID token verified by :meth:`verify_id_token` (the idToken sign-in)."""
        return self.map_claims(claims, user_data)

    def map_claims(self, claims, user_data=None):
        if not claims.get("sub"):
            raise ProviderError(f"{self.id}: no subject")
        return Profile(account_id=str(claims["sub"]), email=_email(claims.get("email")),
                       email_verified=_true(claims.get("email_verified")), name=claims.get("name") or "",
                       image=claims.get("picture"), raw=claims)


class GenericOIDCProvider(OIDCProvider):
    """A ``{"type": "oidc", "issuer": ...}`` entry: endpoints from the issuer's discovery document."""

    name = "OpenID Connect"
    default_scopes = ("openid", "email", "profile")
    token_auth_method = "client_secret_basic"

    def __init__(self, provider_id, config):
        super().__init__(provider_id, config)
        self._configured_issuer = (config.get("issuer") or "").rstrip("/")
        self.issuer = self._configured_issuer
        self._explicit_auth = bool(config.get("tokenEndpointAuthMethod"))
        self._discovered = False

    def scopes(self, extra=()):
        configured = self.config.get("scopes")
        found = list(configured) if configured else list(self.default_scopes)
        if "openid" not in found:
            found.insert(0, "openid")
        return found + [scope for scope in extra or [] if scope not in found]

    def get_endpoint(self, attribute):
        if not self._discovered:
            self.discover()
        return super().get_endpoint(attribute)

    def discover(self):
        """Load the discovery document once (cached); explicit settings entries win over it."""
        if self._discovered:
            return
        document = discovery_document(self.id, self._configured_issuer)
        self.issuer = document["issuer"]  # exactly as the OP writes it, for iss comparisons
        for attribute, key in (("authorization_endpoint", "authorization_endpoint"),
                               ("token_endpoint", "token_endpoint"),
                               ("userinfo_endpoint", "userinfo_endpoint"), ("jwks_uri", "jwks_uri")):
            if not getattr(self, attribute) and document.get(key):
                setattr(self, attribute, document[key])
        methods = document.get("token_endpoint_auth_methods_supported")
        if not self._explicit_auth and methods == ["client_secret_post"]:
            self.token_auth_method = "client_secret_post"
        supported = document.get("id_token_signing_alg_values_supported")
        if isinstance(supported, list):
            self.id_token_algorithms = tuple(a for a in ALLOWED_ALGORITHMS if a in supported)
        self._discovered = True

    def exchange_code(self, ctx, code, code_verifier, device_id=None):
        self.discover()
        return super().exchange_code(ctx, code, code_verifier, device_id)


def discovery_document(provider_id, issuer):
    """``{issuer}/.well-known/openid-configuration``, fetched only from a trusted origin.

    The issuer is a setting, but the fetch runs inside the server's network: an untrusted issuer could
    aim it at internal services (SSRF), so only origins the deployment already trusts are fetched.
    """
    if not issuer or not origins.is_trusted_origin(issuer) or not issuer.startswith(("https://", "http://")):
        raise ProviderError(f"{provider_id}: issuer {issuer!r} is not a trusted origin")
    key = f"authservice:oidc-discovery:{hashlib.sha256(issuer.encode()).hexdigest()[:24]}"
    document = cache.get(key)
    if document is not None:
        return document
    url = f"{issuer}/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=DISCOVERY_TIMEOUT, allow_redirects=False,
                                headers={"Accept": "application/json"})
        document = response.json() if response.status_code == 200 else None
    except (requests.RequestException, ValueError, json.JSONDecodeError):
        document = None
    if not isinstance(document, dict):
        raise ProviderError(f"{provider_id}: discovery at {url} failed")
    # OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
    if (document.get("issuer") or "").rstrip("/") != issuer:
        raise ProviderError(f"{provider_id}: discovery names issuer {document.get('issuer')!r}")
    for name in ("authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint"):
        value = document.get(name)
        if value is not None and not (isinstance(value, str) and value.startswith(("https://", "http://"))):
            raise ProviderError(f"{provider_id}: discovery {name} is not an http(s) URL")
    cache.set(key, document, DISCOVERY_TTL)
    return document
