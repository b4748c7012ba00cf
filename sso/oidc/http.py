"""Every server-side request to an IdP endpoint (token, userinfo, JWKS) goes through :func:`fetch`.

sso.md §3, §10.10: redirects are never followed (``oidc_endpoint_redirect``), and a host that is not
publicly routable is refused unless its origin is trusted; for a host name every resolved address is
checked, so a public name pointing at 127.0.0.1 or a cloud metadata address is refused too.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

import requests

from authservice import origins
from authservice.errors import APIError, codes
from sso import app_settings as sso_settings
from sso import errors  # noqa: F401 - registers the SSO codes


def _is_public(address):
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global


def check_endpoint(url):
    """Raise unless ``url`` is an http(s) URL on a trusted origin or on a public host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except (ValueError, TypeError, AttributeError):
        raise APIError(400, codes.discovery_invalid_url) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise APIError(400, codes.discovery_invalid_url)
    if origins.is_trusted_origin(url):
        return
    try:
        answers = socket.getaddrinfo(parts.hostname, port or (443 if parts.scheme == "https" else 80),
                                     proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        raise APIError(400, codes.discovery_private_host) from None
    if not answers or not all(_is_public(answer[4][0]) for answer in answers):
        raise APIError(400, codes.discovery_private_host)


def fetch(method, url, **kwargs):
    """``requests`` with the endpoint checks, the configured timeout and no redirects followed."""
    check_endpoint(url)
    kwargs.setdefault("timeout", sso_settings.discovery_timeout)
    response = requests.request(method, url, allow_redirects=False, **kwargs)
    if 300 <= response.status_code < 400:
        raise APIError(400, codes.oidc_endpoint_redirect)
    return response
