"""Token exchange, ID token verification and userinfo for one SSO provider, on mozilla-django-oidc.

:class:`ProviderOIDCBackend` is mozilla-django-oidc's ``OIDCAuthenticationBackend`` driven by one
``SsoProvider`` row instead of the global ``OIDC_*`` settings: the attributes the library reads in its
``__init__`` are set from the provider's ``oidcConfig`` and ``get_settings`` answers per provider.
Where the library does not fit our contract (sso.md §3, §10) a method is overridden and says why.
We never call ``authenticate``/``get_or_create_user``: they find users by e-mail, and SSO accounts are
keyed on (providerId, sub) (sso.md §1, §6).
"""

import base64
import hashlib
import json
import logging
from urllib.parse import quote

import jwt
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.exceptions import SuspiciousOperation
from django.utils.encoding import smart_str
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from authservice import fetch
from authservice.errors import APIError
from sso import discovery
from sso.oidc import client_assertion

logger = logging.getLogger("sso")

# Asymmetric algorithms only: "none" and every HS* are refused before any key is looked up, so a
# token "signed" with the provider's public key as an HMAC secret never reaches a verifier.
ALLOWED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                      "ES256", "ES384", "ES512", "EdDSA")
_KTY = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}
JWKS_CACHE_SECONDS = 3600
# Clock difference tolerated between the IdP and us on exp/nbf/iat.
CLOCK_SKEW = 60
TOKEN_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt")


class OIDCFailure(Exception):
    """A failed step of the callback: ``error``/``error_description`` of the redirect (sso.md §9)."""

    def __init__(self, description, error="invalid_provider"):
        super().__init__(description)
        self.error = error
        self.description = description


class ProviderOIDCBackend(OIDCAuthenticationBackend):
    def __init__(self, provider, config):
        # Not calling the library's __init__: it reads global OIDC_* settings (and raises
        # ImproperlyConfigured without them). The same attributes come from the provider row.
        self.provider = provider
        self.config = config
        self.OIDC_OP_TOKEN_ENDPOINT = config.get("tokenEndpoint")
        self.OIDC_OP_USER_ENDPOINT = config.get("userInfoEndpoint")
        self.OIDC_OP_JWKS_ENDPOINT = config.get("jwksEndpoint")
        self.OIDC_RP_CLIENT_ID = config.get("clientId")
        self.OIDC_RP_CLIENT_SECRET = config.get("clientSecret") or ""
        # Set per token from its header, after the allow-list check (see verify_token).
        self.OIDC_RP_SIGN_ALGO = "RS256"
        self.OIDC_RP_IDP_SIGN_KEY = None
        self.UserModel = get_user_model()

    def get_settings(self, attr, *args):
        """The library's knobs, per provider rather than from django.conf.settings."""
        per_provider = {
            "OIDC_USE_NONCE": True,
            "OIDC_ALLOW_UNSECURED_JWT": False,
            "OIDC_VERIFY_KID": True,
            "OIDC_VERIFY_SSL": True,
            "OIDC_TOKEN_USE_BASIC_AUTH": self.token_auth_method == "client_secret_basic",
        }
        if attr in per_provider:
            return per_provider[attr]
        return args[0] if args else None

    @property
    def token_auth_method(self):
        return self.config.get("tokenEndpointAuthentication") or "client_secret_basic"

    # --- code exchange ----------------------------------------------------------------------------
    def get_token(self, payload):
        """POST the code to the token endpoint with the provider's client authentication (sso.md §3 step 6).

        Overridden: the library's Basic header does not form-encode id and secret (RFC 6749 §2.3.1),
        follows redirects and checks no host; its errors carry no IdP error_description.
        """
        if not self.OIDC_OP_TOKEN_ENDPOINT:
            raise OIDCFailure("token_endpoint_not_found")
        data = dict(payload)
        headers = {"Accept": "application/json"}
        method = self.token_auth_method
        if method == "private_key_jwt":
            try:
                data.update(client_assertion.form_fields(self.provider, self.config, self.OIDC_RP_CLIENT_ID,
                                                         self.OIDC_OP_TOKEN_ENDPOINT))
            except client_assertion.KeyUnavailable as unavailable:
                raise OIDCFailure(unavailable.error) from None
        elif method == "client_secret_post":
            data["client_id"] = self.OIDC_RP_CLIENT_ID
            data["client_secret"] = self.OIDC_RP_CLIENT_SECRET
        else:
            pair = f"{quote(self.OIDC_RP_CLIENT_ID, safe='')}:{quote(self.OIDC_RP_CLIENT_SECRET, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        response = self._fetch("POST", self.OIDC_OP_TOKEN_ENDPOINT, data=data, headers=headers,
                               failure="token_response_error")
        body = _json_or_none(response)
        if response.status_code != 200:
            description = body.get("error_description") if isinstance(body, dict) else None
            raise OIDCFailure(description if isinstance(description, str) and description
                              else "token_response_error")
        if not isinstance(body, dict) or not body.get("access_token") and not body.get("id_token"):
            raise OIDCFailure("token_response_not_found")
        return body

    # --- ID token -----------------------------------------------------------------------------------
    def verify_token(self, token, **kwargs):
        """The verified claims of ``token``: signature by the provider's JWKS, iss, aud, azp, exp, nbf, nonce.

        Overridden: the library chooses the key by the *configured* algorithm's prefix and falls
        back to the client secret as an HMAC key for anything not RS*/ES*; we accept only the
        asymmetric allow-list and always verify against the provider's JWKS.
        """
        check_nonce = kwargs.get("check_nonce", True)
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise SuspiciousOperation("Malformed JWT") from None
        alg = header.get("alg")
        if alg not in ALLOWED_ALGORITHMS:
            raise SuspiciousOperation(f"JWT algorithm {alg!r} is not allowed")
        self.OIDC_RP_SIGN_ALGO = alg
        key = self.retrieve_matching_jwk(token)
        payload = self.get_payload_data(token, key)  # the library's; unsecured JWTs stay refused
        if check_nonce and self.get_settings("OIDC_USE_NONCE", True) and kwargs.get("nonce") != payload.get("nonce"):
            raise SuspiciousOperation("JWT Nonce verification failed.")
        return payload

    def _verify_jws(self, payload, key):
        """Overridden: the library decodes with ``verify_aud: False``; we check every registered claim."""
        issuer = self.provider.issuer
        try:
            claims = jwt.decode(
                payload, key, algorithms=[self.OIDC_RP_SIGN_ALGO], audience=self.OIDC_RP_CLIENT_ID,
                issuer=[issuer, issuer.rstrip("/")], leeway=CLOCK_SKEW,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise SuspiciousOperation(f"JWS token verification failed: {exc}") from None
        audience = claims.get("aud")
        multiple = isinstance(audience, list) and len(audience) > 1
        azp = claims.get("azp")
        if (multiple and azp is None) or (azp is not None and azp != self.OIDC_RP_CLIENT_ID):
            raise SuspiciousOperation("azp does not name this client")
        return claims

    def retrieve_matching_jwk(self, token):
        """The provider's signing key for ``token``, from a per-provider cache with one refetch.

        Overridden: the library fetches the JWKS on every call, requires ``kid`` on every key and
        follows redirects. Here an unknown ``kid`` (a rotated key) refetches once, then fails.
        """
        if not self.OIDC_OP_JWKS_ENDPOINT:
            raise OIDCFailure("jwks_endpoint_not_found")
        header = jwt.get_unverified_header(token)
        jwk = _match(self._jwks(refresh=False), header)
        if jwk is None:
            jwk = _match(self._jwks(refresh=True), header)
        if jwk is None:
            raise SuspiciousOperation("Could not find a valid JWKS.")
        try:
            return jwt.PyJWK(jwk, algorithm=header["alg"])
        except jwt.PyJWTError:
            raise SuspiciousOperation("Unusable JWK") from None

    def _jwks_cache_key(self):
        url_hash = hashlib.sha256(self.OIDC_OP_JWKS_ENDPOINT.encode()).hexdigest()[:24]
        return f"sso:jwks:{self.provider.pk}:{url_hash}"

    def _jwks(self, refresh):
        key = self._jwks_cache_key()
        if not refresh:
            cached = cache.get(key)
            if cached is not None:
                return cached
        response = self._fetch("GET", self.OIDC_OP_JWKS_ENDPOINT, headers={"Accept": "application/json"},
                               failure="token_not_verified")
        body = _json_or_none(response)
        if response.status_code != 200 or not isinstance(body, dict) or not isinstance(body.get("keys"), list):
            raise SuspiciousOperation("JWKS endpoint answered without keys")
        cache.set(key, body["keys"], JWKS_CACHE_SECONDS)
        return body["keys"]

    # --- userinfo -----------------------------------------------------------------------------------
    def get_userinfo(self, access_token, id_token, payload):
        """UserInfo claims; their ``sub`` must be the ID token's (sso.md §3 step 8).

        Overridden for the endpoint checks and redirects, and because a JWT userinfo answer carries no
        nonce, which the library's verify_token would demand.
        """
        if not self.OIDC_OP_USER_ENDPOINT:
            raise OIDCFailure("user_info_endpoint_not_found")
        response = self._fetch("GET", self.OIDC_OP_USER_ENDPOINT,
                               headers={"Authorization": f"Bearer {access_token}"},
                               failure="userinfo_response_error")
        if response.status_code != 200:
            raise OIDCFailure("userinfo_response_error")
        if response.headers.get("content-type", "").lower().startswith("application/jwt"):
            try:
                claims = self.verify_token(response.text, check_nonce=False)
            except SuspiciousOperation:
                raise OIDCFailure("userinfo_response_error") from None
        else:
            claims = _json_or_none(response)
        if not isinstance(claims, dict) or not claims:
            raise OIDCFailure("userinfo_response_not_found")
        if payload is not None and smart_str(claims.get("sub")) != smart_str(payload.get("sub")):
            raise OIDCFailure("id_token_userinfo_subject_mismatch")
        return claims

    def _fetch(self, method, url, failure, **kwargs):
        """``failure`` is the error_description when the IdP cannot be reached."""
        try:
            # The one guarded client (I8): one DNS lookup, checked and pinned address, no redirects,
            # bounded size and time. The library's own requests.get/post are never reached.
            return discovery.request(method, url, **kwargs)
        except APIError as error:
            raise OIDCFailure(error.message, error=error.code) from None
        except fetch.FetchError as exc:
            logger.warning("SSO provider %s: %s %s failed: %s", self.provider.provider_id, method, url, exc.reason)
            raise OIDCFailure(failure) from None


def _json_or_none(response):
    try:
        return response.json()
    except (ValueError, json.JSONDecodeError):
        return None


def _match(keys, header):
    """The one JWK that can verify a token with this header, or None."""
    alg, kid = header.get("alg"), header.get("kid")
    candidates = []
    for jwk in keys:
        if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig":
            continue
        if kid is not None and jwk.get("kid") != kid:
            continue
        if "alg" in jwk and jwk["alg"] != alg:
            continue
        if jwk.get("kty") != _KTY.get(alg[:2]):
            continue
        candidates.append(jwk)
    return candidates[0] if candidates else None
