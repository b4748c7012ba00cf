"""IdP metadata by URL: ``samlConfig.idpMetadata.url`` (issue 7 item 7; better-auth cannot do this).

The URL is fetched at registration (:func:`hydrate`) and again by ``manage.py sso_refresh_metadata``
(:func:`refresh`), so a rotated IdP signing certificate reaches us without anyone editing the provider.
The fetched document is stored as ``idpMetadata.metadata``, where the SAML code reads certificates and
endpoints from; a failed refresh keeps the last good copy.

The fetch runs on the server with a URL a user typed, so it is guarded against SSRF (sso.md §10.10):

- https only, unless the URL lies in a trusted origin;
- the host name is resolved once, every answer must be a public address unless the origin is trusted,
  and the connection goes to that checked address (no second lookup an attacker's DNS could change);
- redirects are followed by hand, each hop checked by the same rules, at most ``MAX_REDIRECTS``;
- a connect/read timeout (``discovery_timeout``) and an overall deadline;
- the body is streamed and abandoned past ``saml.max_metadata_size`` bytes; no compressed bodies.
"""

import ipaddress
import socket
import time
from urllib.parse import urljoin, urlsplit

import certifi
import urllib3
from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException
from django.db import transaction

from authservice import origins
from authservice.errors import APIError
from sso import app_settings
from sso.errors import codes, metadata_too_large_message

MAX_REDIRECTS = 5
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
MD = "urn:oasis:names:tc:SAML:2.0:metadata"
DS = "http://www.w3.org/2000/09/xmldsig#"
ACCEPT = "application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.8"


# --- the guarded fetch -----------------------------------------------------------------------------
def _is_public(address):
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _check_url(url):
    """``(parts, trusted)`` for a URL we may fetch, else ``SAML_METADATA_URL_INVALID``."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except (ValueError, TypeError, AttributeError):
        raise APIError(400, codes.SAML_METADATA_URL_INVALID) from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        raise APIError(400, codes.SAML_METADATA_URL_INVALID)
    trusted = origins.is_trusted_origin(url)
    if scheme != "https" and not trusted:
        raise APIError(400, codes.SAML_METADATA_URL_INVALID)
    return parts, trusted


def _resolve(parts, trusted):
    """The address to connect to: every DNS answer checked, the first one used."""
    host = parts.hostname.strip("[]").rstrip(".")
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        raise APIError(502, codes.SAML_METADATA_FETCH_FAILED,
                       f"Failed to fetch IdP metadata: cannot resolve {host}") from None
    addresses = list(dict.fromkeys(info[4][0] for info in answers))
    if not addresses:
        raise APIError(502, codes.SAML_METADATA_FETCH_FAILED,
                       f"Failed to fetch IdP metadata: cannot resolve {host}")
    if not trusted and not all(_is_public(address) for address in addresses):
        raise APIError(400, codes.SAML_METADATA_URL_PRIVATE_HOST)
    return host, addresses[0], port


def _open(parts, host, address, port, timeout):
    """One GET to the pinned ``address``; TLS is still verified against ``host``."""
    options = {"timeout": urllib3.Timeout(connect=timeout, read=timeout), "retries": False, "maxsize": 1}
    if parts.scheme.lower() == "https":
        pool = urllib3.HTTPSConnectionPool(address, port, cert_reqs="CERT_REQUIRED", ca_certs=certifi.where(),
                                           server_hostname=host, assert_hostname=host, **options)
    else:
        pool = urllib3.HTTPConnectionPool(address, port, **options)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = {"Host": parts.netloc.rsplit("@", 1)[-1], "Accept": ACCEPT, "Accept-Encoding": "identity",
               "User-Agent": "authservice-sso-metadata"}
    return pool.urlopen("GET", target, headers=headers, redirect=False, preload_content=False,
                        assert_same_host=False, decode_content=False)


def _read_capped(response, limit, deadline):
    length = response.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > limit:
        raise APIError(400, codes.SAML_METADATA_TOO_LARGE, metadata_too_large_message("IdP", limit))
    encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding != "identity":
        raise APIError(502, codes.SAML_METADATA_FETCH_FAILED,
                       f"Failed to fetch IdP metadata: unsupported Content-Encoding {encoding}")
    body = bytearray()
    for chunk in response.stream(8192, decode_content=False):
        body += chunk
        if len(body) > limit:
            raise APIError(400, codes.SAML_METADATA_TOO_LARGE, metadata_too_large_message("IdP", limit))
        if time.monotonic() > deadline:
            raise APIError(502, codes.SAML_METADATA_FETCH_FAILED, "Failed to fetch IdP metadata: timed out")
    return bytes(body)


def fetch_bytes(url):
    """The body at ``url`` under the SSRF rules above; every failure is an :class:`APIError`."""
    timeout = app_settings.discovery_timeout
    deadline = time.monotonic() + 3 * timeout
    for _hop in range(MAX_REDIRECTS + 1):
        parts, trusted = _check_url(url)
        host, address, port = _resolve(parts, trusted)
        try:
            response = _open(parts, host, address, port, timeout)
            try:
                if response.status in REDIRECT_STATUSES and response.headers.get("Location"):
                    url = urljoin(url, response.headers["Location"])
                    continue
                if response.status != 200:
                    raise APIError(502, codes.SAML_METADATA_FETCH_FAILED,
                                   f"Failed to fetch IdP metadata: HTTP {response.status}")
                return _read_capped(response, app_settings.saml.max_metadata_size, deadline)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            reason = "timed out" if isinstance(exc, urllib3.exceptions.TimeoutError) else exc.__class__.__name__
            raise APIError(502, codes.SAML_METADATA_FETCH_FAILED,
                           f"Failed to fetch IdP metadata: {reason}") from None
    raise APIError(502, codes.SAML_METADATA_FETCH_FAILED, "Failed to fetch IdP metadata: too many redirects")


# --- the document --------------------------------------------------------------------------------
def entity_id(xml):
    """The ``entityID`` of IdP metadata after the checks of :func:`parse`."""
    return parse(xml).get("entityID")


def parse(xml):
    """The root ``md:EntityDescriptor`` of IdP metadata with a signing certificate, else 400."""
    try:
        root = ElementTree.fromstring(xml, forbid_dtd=True)
    except (ElementTree.ParseError, DefusedXmlException, ValueError):
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA) from None
    descriptor = root.find(f"{{{MD}}}IDPSSODescriptor")
    if root.tag != f"{{{MD}}}EntityDescriptor" or not root.get("entityID") or descriptor is None:
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA)
    signing = [key for key in descriptor.findall(f"{{{MD}}}KeyDescriptor") if key.get("use") in (None, "signing")]
    if not any((key.findtext(f".//{{{DS}}}X509Certificate") or "").strip() for key in signing):
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA)
    return root


def fetch_metadata(url):
    """IdP metadata XML (text) fetched from ``url``, checked to be an IdP EntityDescriptor."""
    body = fetch_bytes(url)
    try:
        xml = body.decode("utf-8")
    except UnicodeDecodeError:
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA) from None
    parse(xml)
    return xml


def metadata_url(config):
    idp = (config or {}).get("idpMetadata")
    url = idp.get("url") if isinstance(idp, dict) else None
    return url if isinstance(url, str) and url else None


def _check_entity(config, xml):
    """The fetched document must describe the IdP this provider was set up for."""
    idp = config.get("idpMetadata") or {}
    expected = idp.get("entityID")
    if not expected and idp.get("metadata"):
        try:
            expected = entity_id(idp["metadata"])
        except APIError:
            expected = None
    found = entity_id(xml)
    if expected and found != expected:
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA,
                       f'IdP metadata entityID "{found}" does not match "{expected}"')


def hydrate(config, previous=None):
    """``config`` with ``idpMetadata.metadata`` fetched from ``idpMetadata.url`` (register / update).

    Called before the SAML config checks, so a config naming only a URL passes the certificate-source
    rule. ``previous`` is the stored config on update: the URL is fetched again only when it changed.
    """
    url = metadata_url(config)
    if url is None or (previous is not None and metadata_url(previous) == url
                       and (config.get("idpMetadata") or {}).get("metadata")):
        return config
    xml = fetch_metadata(url)
    idp = {key: value for key, value in config["idpMetadata"].items() if key != "metadata"}
    _check_entity({**config, "idpMetadata": idp}, xml)
    return {**config, "idpMetadata": {**idp, "metadata": xml}}


def refresh(provider):
    """Fetch the provider's metadata URL again; True when the stored copy changed.

    On any failure the stored copy stays as it was and the :class:`APIError` propagates. The row is
    re-read under a lock so a concurrent update-provider is neither lost nor overwritten.
    """
    from sso.models import SsoProvider

    url = metadata_url(provider.saml_config)
    if url is None:
        raise APIError(400, codes.SAML_METADATA_URL_INVALID)
    xml = fetch_metadata(url)
    with transaction.atomic():
        current = SsoProvider.objects.select_for_update().get(pk=provider.pk)
        config = current.saml_config or {}
        if metadata_url(config) != url:  # reconfigured meanwhile: that update wins
            return False
        _check_entity(config, xml)
        if config["idpMetadata"].get("metadata") == xml:
            return False
        current.saml_config = {**config, "idpMetadata": {**config["idpMetadata"], "metadata": xml}}
        current.save(update_fields=["saml_config", "updated_at"])
    provider.saml_config = current.saml_config
    return True
