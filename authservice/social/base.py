"""The OAuth 2 provider every social provider builds on (core.md §5.0–§5.2).

A provider knows three things: how to build its authorize URL, how to exchange a code for tokens
and how to turn tokens into a :class:`Profile`. Subclasses change class attributes (endpoints, default
scopes) and override :meth:`OAuth2Provider.map_profile` or :meth:`OAuth2Provider.fetch_profile`.
Every endpoint can be overridden by the settings entry (``authorizationEndpoint``, ``tokenEndpoint``,
``userInfoEndpoint``, ``jwksUri``, ``issuer``), which is also how tests point built-ins at stubs.
"""

import base64
import hashlib
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import quote, urlencode

import requests
from django.utils import timezone

from authservice import links

logger = logging.getLogger("authservice.social")

# Parameters the service sets itself; additionalParams may not override them (core.md §5.1).
RESERVED_PARAMS = ("state", "client_id", "redirect_uri", "response_type", "code_challenge",
                   "code_challenge_method", "nonce", "scope")
# Settings keys that replace a class attribute: (settings key, attribute).
URL_OVERRIDES = (("authorizationEndpoint", "authorization_endpoint"), ("tokenEndpoint", "token_endpoint"),
                 ("userInfoEndpoint", "userinfo_endpoint"), ("jwksUri", "jwks_uri"), ("issuer", "issuer"))


class ProviderError(Exception):
    """The provider refused, answered garbage, or its token did not verify."""


@dataclass
class Tokens:
    access_token: str | None = None
    refresh_token: str | None = None
    id_token: str | None = None
    access_token_expires_at: object = None
    refresh_token_expires_at: object = None
    scopes: list = field(default_factory=list)
    raw: dict = field(default_factory=dict)

    @classmethod
    def from_response(cls, data):
        now = timezone.now()

        def expiry(seconds):
            try:
                return now + timedelta(seconds=int(seconds)) if seconds else None
            except (TypeError, ValueError):
                return None

        scope = data.get("scope")
        scopes = scope.split() if isinstance(scope, str) else [s for s in scope or [] if isinstance(s, str)]
        return cls(access_token=data.get("access_token"), refresh_token=data.get("refresh_token"),
                   id_token=data.get("id_token"), access_token_expires_at=expiry(data.get("expires_in")),
                   refresh_token_expires_at=expiry(data.get("refresh_token_expires_in")),
                   scopes=scopes, raw=data)


@dataclass
class Profile:
    """What the sign-in flow needs from a provider; ``account_id`` is the provider's subject."""

    account_id: str
    email: str | None = None
    email_verified: bool = False
    name: str = ""
    image: str | None = None
    raw: dict = field(default_factory=dict)


def code_challenge(verifier):
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


class OAuth2Provider:
    name = "OAuth 2"
    authorization_endpoint = None
    token_endpoint = None
    userinfo_endpoint = None
    jwks_uri = None
    issuer = None
    default_scopes = ()
    scope_joiner = " "
    response_type = "code"
    response_mode = None
    # better-auth's default for providers with a client secret.
    token_auth_method = "client_secret_post"
    # OIDC providers whose ID tokens we verify send and check a nonce (core.md §5.2).
    requires_nonce = False
    # Can verify an ID token handed over by a native app (core.md §5.1 idToken).
    supports_id_token = False
    timeout = 10

    def __init__(self, provider_id, config):
        self.id = provider_id
        self.config = dict(config)
        self.client_id = self.config.get("clientId") or ""
        self.client_secret = self.config.get("clientSecret") or ""
        for key, attribute in URL_OVERRIDES:
            if self.config.get(key):
                setattr(self, attribute, self.config[key])
        if self.config.get("tokenEndpointAuthMethod"):
            self.token_auth_method = self.config["tokenEndpointAuthMethod"]
        self.disable_sign_up = bool(self.config.get("disableSignUp"))
        self.disable_implicit_sign_up = bool(self.config.get("disableImplicitSignUp"))

    # --- the authorize URL ----------------------------------------------------------------------
    def scopes(self, extra=()):
        """Default scopes (unless ``disableDefaultScope``), then the entry's, then the request's."""
        found = [] if self.config.get("disableDefaultScope") else list(self.default_scopes)
        for scope in list(self.config.get("scopes") or self.config.get("scope") or []) + list(extra or []):
            if scope not in found:
                found.append(scope)
        return found

    def redirect_uri(self, ctx):
        return self.config.get("redirectURI") or f"{links.base(ctx)}/callback/{self.id}"

    def extra_authorize_params(self):
        """Provider-specific parameters (Google's ``access_type``, …), before the caller's."""
        return {key: self.config[option] for option, key in (("prompt", "prompt"),) if self.config.get(option)}

    def authorization_url(self, ctx, *, state, code_verifier, nonce=None, scopes=(), login_hint=None,
                          additional_params=None):
        params = {"response_type": self.response_type, "client_id": self.client_id, "state": state}
        scope_list = self.scopes(scopes)
        if scope_list:
            params["scope"] = self.scope_joiner.join(scope_list)
        params["redirect_uri"] = self.redirect_uri(ctx)
        if login_hint:
            params["login_hint"] = login_hint
        if nonce:
            params["nonce"] = nonce
        if self.response_mode:
            params["response_mode"] = self.response_mode
        params.update(self.extra_authorize_params())
        params["code_challenge_method"] = "S256"
        params["code_challenge"] = code_challenge(code_verifier)
        for key, value in (additional_params or {}).items():
            if key not in RESERVED_PARAMS:
                params[key] = value
        endpoint = self.get_endpoint("authorization_endpoint")
        separator = "&" if "?" in endpoint else "?"
        return endpoint + separator + urlencode(params, quote_via=quote)

    def get_endpoint(self, attribute):
        value = getattr(self, attribute)
        if not value:
            raise ProviderError(f"{self.id}: no {attribute}")
        return value

    # --- the token endpoint ---------------------------------------------------------------------
    def exchange_code(self, ctx, code, code_verifier, device_id=None):
        body = {"grant_type": "authorization_code", "code": code, "code_verifier": code_verifier,
                "redirect_uri": self.redirect_uri(ctx)}
        if device_id:
            body["device_id"] = device_id
        auth = None
        if self.token_auth_method == "client_secret_basic":
            # RFC 6749 §2.3.1: both halves form-encoded before base64.
            auth = (quote(self.client_id, safe=""), quote(self.client_secret, safe=""))
        else:
            body["client_id"] = self.client_id
            if self.client_secret:
                body["client_secret"] = self.client_secret
        data = self.request_json("POST", self.get_endpoint("token_endpoint"), data=body, auth=auth)
        if not isinstance(data, dict) or "error" in data or not data.get("access_token"):
            raise ProviderError(f"{self.id}: token endpoint refused the code")
        return Tokens.from_response(data)

    # --- the profile ----------------------------------------------------------------------------
    def fetch_profile(self, tokens, nonce=None, user_data=None):
        """The user behind ``tokens``. Default: GET the userinfo endpoint, then :meth:`map_profile`."""
        data = self.request_json("GET", self.get_endpoint("userinfo_endpoint"),
                                 headers={"Authorization": f"Bearer {tokens.access_token}"})
        if not isinstance(data, dict):
            raise ProviderError(f"{self.id}: userinfo is not an object")
        return self.map_profile(data)

    def map_profile(self, data):
        subject = data.get("sub", data.get("id"))
        if subject in (None, ""):
            raise ProviderError(f"{self.id}: profile has no subject")
        return Profile(account_id=str(subject), email=_email(data.get("email")),
                       email_verified=_true(data.get("email_verified")),
                       name=data.get("name") or "", image=data.get("picture"), raw=data)

    def verify_id_token(self, token, nonce=None):
        raise ProviderError(f"{self.id}: ID tokens are not supported")

    def profile_from_claims(self, claims, user_data=None):
        raise ProviderError(f"{self.id}: ID tokens are not supported")

    # --- HTTP -----------------------------------------------------------------------------------
    def request_json(self, method, url, **kwargs):
        headers = {"Accept": "application/json", "User-Agent": "django-authservice"}
        headers.update(kwargs.pop("headers", None) or {})
        try:
            # Redirects are refused: a token or userinfo endpoint that redirects is not trusted.
            response = requests.request(method, url, headers=headers, timeout=self.timeout,
                                        allow_redirects=False, **kwargs)
        except requests.RequestException as exc:
            raise ProviderError(f"{self.id}: {method} {url} failed: {exc}") from None
        if response.status_code != 200:
            raise ProviderError(f"{self.id}: {method} {url} answered {response.status_code}")
        try:
            return response.json()
        except ValueError:
            raise ProviderError(f"{self.id}: {method} {url} did not answer JSON") from None


def _email(value):
    return value.strip().lower() if isinstance(value, str) and value.strip() else None


def _true(value):
    """``email_verified`` as a boolean; some providers (Apple) send the string ``"true"``."""
    return value is True or value == "true"
