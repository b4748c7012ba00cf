"""OIDC discovery, and the OIDC side of the guarded HTTP client (sso.md §4, §10.10).

Two rules keep a registered provider from turning the service into an SSRF proxy:

- the discovery URL and every discovered endpoint must lie in a trusted origin (``trustedOrigins``,
  globs included: an allowlist), checked before any request is sent;
- an endpoint given explicitly by the registering user must be a public host unless its origin is
  trusted exactly, never through a glob (``discovery_private_host``; the client's own rule,
  ``fetch.may_reach_private``); :func:`request` re-checks that before each fetch, and the
  fetch itself goes through the one guarded client (:mod:`authservice.fetch`, I8), which resolves
  the name once, checks every address and connects to the checked one. No redirect is followed.
"""

import ipaddress
from urllib.parse import urlsplit

from authservice import fetch, origins
from authservice.errors import APIError
from sso import app_settings
from sso.errors import codes

REQUIRED_FIELDS = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri")
OPTIONAL_ENDPOINTS = ("userinfo_endpoint", "revocation_endpoint", "end_session_endpoint",
                      "introspection_endpoint")
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt")
# oidcConfig key -> discovery document key.
ENDPOINT_KEYS = {
    "authorizationEndpoint": "authorization_endpoint",
    "tokenEndpoint": "token_endpoint",
    "jwksEndpoint": "jwks_uri",
    "userInfoEndpoint": "userinfo_endpoint",
}
# Explicitly configurable URLs checked at registration (discoveryEndpoint included, issuer not).
CONFIG_URL_KEYS = ("discoveryEndpoint", *ENDPOINT_KEYS)
# Discovery documents, JWKS, token and userinfo answers are small JSON; past this they are refused.
MAX_RESPONSE_BYTES = 512 * 1024
_PRIVATE_NAMES = ("localhost", ".localhost", ".local", ".internal", ".localdomain", ".home.arpa")


class DiscoveryError(APIError):
    """An :class:`APIError` with better-auth's discovery code, status and message prefix."""

    PREFIXES = {
        "discovery_timeout": (502, "OIDC discovery timed out: "),
        "discovery_unexpected_error": (502, "OIDC discovery failed: "),
        "discovery_not_found": (400, "OIDC discovery endpoint not found. The issuer may not support "
                                     "OIDC discovery, or the URL is incorrect. "),
        "discovery_invalid_url": (400, "Invalid OIDC discovery URL: "),
        "discovery_untrusted_origin": (400, "Untrusted OIDC discovery URL: "),
        "discovery_invalid_json": (400, "OIDC discovery returned invalid data: "),
        "discovery_incomplete": (400, "OIDC discovery document is missing required fields: "),
        "issuer_mismatch": (400, "OIDC issuer mismatch: "),
        # The seed's message has no prefix (sso.md §4).
        "unsupported_token_auth_method": (400, ""),
        "discovery_private_host": (400, ""),
        "oidc_endpoint_redirect": (400, ""),
    }

    def __init__(self, code, detail):
        status, prefix = self.PREFIXES[code]
        self.detail = detail
        super().__init__(status, getattr(codes, code), prefix + detail)


# --- URL checks --------------------------------------------------------------------------------
def parse_http_url(name, url, base=None):
    """``url`` (resolved against ``base`` if relative) when it is http(s), else discovery_invalid_url."""
    if not isinstance(url, str) or not url:
        raise DiscoveryError("discovery_invalid_url", f'The url "{name}" must be valid: {url}')
    # I4: urlsplit silently drops tabs and newlines and keeps backslashes a browser reads as ``/``;
    # the URL is stored and handed out as written, so it is checked as written.
    if any(ord(char) <= 0x20 or ord(char) == 0x7F or char == "\\" for char in url):
        raise DiscoveryError("discovery_invalid_url", f'The url "{name}" must be valid: {url!r}')
    try:
        parts = origins.parse(url)  # the one URL parser (authservice/origins.py)
    except origins.MalformedURL:
        raise DiscoveryError("discovery_invalid_url", f'The url "{name}" must be valid: {url}') from None
    if not parts.scheme and base is not None:
        return _join_issuer_path(name, url, base)
    if parts.scheme.lower() not in ("http", "https"):
        raise DiscoveryError("discovery_invalid_url",
                             f'The url "{name}" must use the http or https supported protocols: {url}')
    if not parts.hostname:
        raise DiscoveryError("discovery_invalid_url", f'The url "{name}" must be valid: {url}')
    return url


def _join_issuer_path(name, endpoint, issuer):
    """A relative endpoint keeps the issuer's path: ``/tenant`` + ``token`` -> ``/tenant/token``."""
    issuer = parse_http_url(name, issuer)
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/") + "/" + endpoint.lstrip("/")
    return f"{parts.scheme}://{parts.netloc}{path}"


def _host_is_private(host):
    """By its spelling only: an address literal or an intranet name. DNS answers are the fetch's job."""
    host = host.strip("[]").rstrip(".").lower()
    if _is_ip_literal(host):
        return not fetch.is_public_address(host)
    if host in _PRIVATE_NAMES or any(host.endswith(suffix) for suffix in _PRIVATE_NAMES if suffix[0] == "."):
        return True
    return "." not in host  # a bare intranet name


def _is_ip_literal(host):
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def check_endpoint(name, url):
    """Check of an explicitly given URL by its spelling: http(s), then a public host unless the
    deployment wrote its origin out in full (:func:`authservice.fetch.may_reach_private`, the client's
    own rule: a glob in ``trustedOrigins`` exempts no host under it).

    Run at registration and before each fetch; the addresses a name resolves to are checked by the
    guarded client on the one lookup whose answer it connects to (I8: no check-then-resolve-again).
    """
    url = parse_http_url(name, url)
    if not fetch.may_reach_private(url) and _host_is_private(urlsplit(url).hostname):
        raise DiscoveryError("discovery_private_host",
                             f'The url "{name}" points to a host that is not publicly routable: {url}')
    return url


def check_config_endpoints(config):
    """Every explicitly configured URL of an ``oidcConfig`` (sso.md §2 check order)."""
    present = [(key, config[key]) for key in CONFIG_URL_KEYS if config.get(key) is not None]
    for key, value in present:
        parse_http_url(key, value)
    for key, value in present:
        check_endpoint(key, value)
    # I4: the issuer is no fetched endpoint (so no private-host rule), but it is a URL we store and
    # derive the discovery URL from: http(s) too, also when discovery is skipped.
    if config.get("issuer") is not None:
        parse_http_url("issuer", config["issuer"])


def _require_trusted(name, url):
    """sso.md §4: the discovery URL and every discovered endpoint lie in ``trustedOrigins``, globs
    included as everywhere else (core.md §1.9). This only narrows where an IdP may be; whether a fetch
    may reach a private host is :func:`check_endpoint`'s and the client's exact-origin rule."""
    if not origins.is_trusted_origin(url):
        subject = "main discovery endpoint" if name == "discoveryEndpoint" else name
        raise DiscoveryError("discovery_untrusted_origin",
                             f'The {subject} "{url}" is not trusted by your trusted origins configuration.')
    return url


# --- the guarded client --------------------------------------------------------------------------
def request(method, url, *, name="endpoint", timeout=None, headers=None, data=None):
    """One fetch of an IdP endpoint through the guarded client (:mod:`authservice.fetch`, I8).

    The name rules of :func:`check_endpoint` first (no DNS: the client resolves once, checks every
    answer and connects to the checked address), then no redirect is followed. Raises
    ``discovery_private_host``, ``discovery_invalid_url`` or ``oidc_endpoint_redirect``; a network
    failure propagates as :class:`fetch.FetchError` for the caller to map to its own error.
    """
    check_endpoint(name, url)
    headers = {"Accept": "application/json", **(headers or {})}
    try:
        response = fetch.request(method, url, timeout=timeout or app_settings.discovery_timeout,
                                 headers=headers, data=data, max_bytes=MAX_RESPONSE_BYTES)
    except fetch.PrivateAddress:
        raise DiscoveryError("discovery_private_host",
                             f'The url "{name}" points to a host that is not publicly routable: {url}') from None
    except fetch.InvalidURL:
        raise DiscoveryError("discovery_invalid_url", f'The url "{name}" must be valid: {url}') from None
    if 300 <= response.status_code < 400:
        raise DiscoveryError("oidc_endpoint_redirect", f'The {name} "{url}" answered with a redirect')
    return response


# --- discovery -----------------------------------------------------------------------------------
def discovery_url(issuer, config=None):
    explicit = (config or {}).get("discoveryEndpoint")
    if explicit:
        return explicit
    return f"{issuer[:-1] if issuer.endswith('/') else issuer}/.well-known/openid-configuration"


def fetch_document(url):
    """The discovery document at a trusted ``url``; every failure is a :class:`DiscoveryError`."""
    parse_http_url("discoveryEndpoint", url)
    _require_trusted("discoveryEndpoint", url)
    try:
        response = request("GET", url, name="discoveryEndpoint")
    except fetch.Unreachable as failure:
        if failure.timed_out:
            raise DiscoveryError("discovery_timeout", "Discovery request timed out") from None
        raise DiscoveryError("discovery_unexpected_error",
                             f"Unexpected error during discovery: {failure.reason}") from None
    except fetch.FetchError as failure:
        raise DiscoveryError("discovery_unexpected_error",
                             f"Unexpected error during discovery: {failure.reason}") from None
    if response.status_code == 404:
        raise DiscoveryError("discovery_not_found", "Discovery endpoint not found")
    if response.status_code == 408:
        raise DiscoveryError("discovery_timeout", "Discovery request timed out")
    if response.status_code >= 400:
        raise DiscoveryError("discovery_unexpected_error",
                             f"Unexpected discovery error: {response.status_code} {response.reason}")
    if not response.content.strip():
        raise DiscoveryError("discovery_invalid_json", "Discovery endpoint returned an empty response")
    try:
        document = response.json()
    except ValueError:
        raise DiscoveryError("discovery_invalid_json", "Discovery endpoint returned invalid JSON") from None
    if not isinstance(document, dict):
        raise DiscoveryError("discovery_invalid_json", "Discovery endpoint returned invalid JSON")
    return document


def validate_document(document, issuer):
    missing = [key for key in REQUIRED_FIELDS if not document.get(key)]
    if missing:
        raise DiscoveryError("discovery_incomplete",
                             f"Discovery document is missing required fields: {', '.join(missing)}")
    found = document["issuer"]
    if not isinstance(found, str) or found.removesuffix("/") != issuer.removesuffix("/"):
        raise DiscoveryError("issuer_mismatch",
                             f'Discovered issuer "{found}" does not match configured issuer "{issuer}"')


def normalize_endpoints(document, issuer):
    """Document endpoints made absolute against the issuer; each must be a trusted origin."""
    endpoints = {}
    for key in (*REQUIRED_FIELDS[1:], *OPTIONAL_ENDPOINTS):
        value = document.get(key)
        if not value:
            continue
        if not isinstance(value, str):
            raise DiscoveryError("discovery_invalid_url", f'The url "{key}" must be valid: {value}')
        endpoints[key] = _require_trusted(key, parse_http_url(key, value, base=issuer))
    return endpoints


def select_auth_method(document, explicit=None):
    """The token endpoint auth method (sso.md §4; SEED: unsupported_token_auth_method)."""
    supported = document.get("token_endpoint_auth_methods_supported") or []
    if not isinstance(supported, list):
        supported = []
    offered = ", ".join(str(item) for item in supported)
    if explicit:
        if supported and explicit not in supported:
            raise DiscoveryError("unsupported_token_auth_method",
                                 f"Unsupported token endpoint authentication method: {offered}")
        return explicit
    if not supported:
        return "client_secret_basic"
    for method in AUTH_METHODS:
        if method in supported:
            return method
    raise DiscoveryError("unsupported_token_auth_method",
                         f"Unsupported token endpoint authentication method: {offered}")


def discover(issuer, config=None):
    """The OIDC config hydrated from discovery; values in ``config`` override discovered ones.

    Returns a new dict with ``discoveryEndpoint``, the four endpoints (``userInfoEndpoint`` may be
    absent) and ``tokenEndpointAuthentication``; other keys of ``config`` are kept as they are.
    """
    config = dict(config or {})
    url = discovery_url(issuer, config)
    document = fetch_document(url)
    validate_document(document, issuer)
    endpoints = normalize_endpoints(document, issuer)
    hydrated = dict(config)
    hydrated["discoveryEndpoint"] = url
    for key, doc_key in ENDPOINT_KEYS.items():
        value = config.get(key) or endpoints.get(doc_key)
        if value:
            hydrated[key] = value
    hydrated["tokenEndpointAuthentication"] = select_auth_method(
        document, config.get("tokenEndpointAuthentication"))
    return hydrated


def needs_discovery(config):
    """A stored config that cannot run a sign-in without discovering first."""
    config = config or {}
    return not (config.get("authorizationEndpoint") and config.get("tokenEndpoint")
                and config.get("jwksEndpoint"))
