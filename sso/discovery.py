"""OIDC discovery and the guarded HTTP client every server-side IdP fetch goes through (sso.md §4, §10.10).

Two rules keep a registered provider from turning the service into an SSRF proxy:

- the discovery URL and every discovered endpoint must lie in a trusted origin (``trustedOrigins``),
  checked before any request is sent;
- an endpoint given explicitly by the registering user must be a public host unless its origin is
  trusted (``discovery_private_host``); :func:`request` re-checks that, DNS answers included, right
  before each fetch, and never follows a redirect.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

import requests

from authservice import origins
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
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
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


def _is_public_ip(address):
    ip = ipaddress.ip_address(address)
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _host_is_private(host, resolve):
    host = host.strip("[]").rstrip(".").lower()
    try:
        return not _is_public_ip(host)
    except ValueError:
        pass
    if host in _PRIVATE_NAMES or any(host.endswith(suffix) for suffix in _PRIVATE_NAMES if suffix[0] == "."):
        return True
    if "." not in host:  # a bare intranet name
        return True
    if not resolve:
        return False
    try:
        answers = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        return False  # unresolvable: the fetch itself fails, nothing private is reached
    return any(not _is_public_ip(info[4][0].split("%", 1)[0]) for info in answers)


def check_endpoint(name, url, resolve=False):
    """Register-time check of an explicitly given URL: http(s), then public host unless trusted."""
    url = parse_http_url(name, url)
    if not origins.is_trusted_origin(url) and _host_is_private(urlsplit(url).hostname, resolve):
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


def _require_trusted(name, url):
    if not origins.is_trusted_origin(url):
        subject = "main discovery endpoint" if name == "discoveryEndpoint" else name
        raise DiscoveryError("discovery_untrusted_origin",
                             f'The {subject} "{url}" is not trusted by your trusted origins configuration.')
    return url


# --- the guarded client --------------------------------------------------------------------------
def request(method, url, *, name="endpoint", timeout=None, **kwargs):
    """``requests.request`` with the SSRF rules: public or trusted host, no redirects, a timeout.

    Raises ``discovery_private_host`` or ``oidc_endpoint_redirect``; network errors propagate as
    ``requests`` exceptions for the caller to map to its own error.
    """
    check_endpoint(name, url, resolve=True)
    kwargs.setdefault("headers", {}).setdefault("Accept", "application/json")
    response = requests.request(method, url, timeout=timeout or app_settings.discovery_timeout,
                                allow_redirects=False, **kwargs)
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
    except requests.Timeout:
        raise DiscoveryError("discovery_timeout", "Discovery request timed out") from None
    except requests.RequestException as exc:
        raise DiscoveryError("discovery_unexpected_error",
                             f"Unexpected error during discovery: {exc.__class__.__name__}") from None
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
