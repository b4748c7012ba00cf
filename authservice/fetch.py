"""The one guarded HTTP client for every server-side fetch of a URL a user gave (I8, sso.md §10.10).

SAML metadata by URL, OIDC discovery, JWKS, the token endpoint and userinfo all go through
:func:`request`. A second client (``requests``, PyJWT's ``PyJWKClient``, urllib) would bring back the
holes this module closes, so nothing else in the service fetches a user-given URL.

- The host name is resolved exactly once. Every answer must be a public address unless the URL lies
  in a trusted origin (``trusted_origins``: a deployment may run its IdP on a private network, and the
  tests run theirs on loopback). The connection then goes to one of those checked addresses: no
  second lookup that an attacker's DNS could answer differently (rebinding). For the same reason no
  proxy from the environment is used: a proxy would resolve the name again.
- "Public" is decided on what the address reaches, not how it is spelt: IPv4-mapped
  (``::ffff:a.b.c.d``) and 6to4 addresses are judged by the IPv4 address inside them, and the
  deprecated IPv4-compatible range (``::a.b.c.d``) and NAT64 are refused outright.
- TLS is verified against the host name (SNI and certificate check), not the pinned address.
- A redirect is followed only when the caller allows it, and then each hop goes through every check
  again; otherwise the 3xx answer is handed back for the caller to refuse.
- Connect/read timeouts, an overall deadline, and the body is abandoned past ``max_bytes``. Compressed
  bodies are refused (a small gzip body can inflate past any cap).
"""

import contextlib
import http.client
import ipaddress
import json
import socket
import threading
import time
from urllib.parse import urlencode, urljoin, urlsplit

import certifi
import urllib3
import urllib3.connection
from urllib3.util.ssl_match_hostname import CertificateError

from authservice import origins
from authservice.errors import APIError

REDIRECT_STATUSES = (301, 302, 303, 307, 308)
DEFAULT_MAX_BYTES = 1024 * 1024
MAX_ADDRESSES = 3  # DNS answers tried in turn when a connection fails
USER_AGENT = "authservice"
# The deprecated IPv4-compatible form (RFC 4291 §2.5.5.1) and NAT64 prefixes (RFC 6052, RFC 8215):
# nothing legitimate publishes them as an IdP address, and what they reach depends on the network.
_REFUSED_V6 = tuple(ipaddress.ip_network(net) for net in ("::/96", "64:ff9b::/96", "64:ff9b:1::/48"))


class FetchError(Exception):
    """A refused or failed fetch; ``reason`` is short and safe to show (no body, no secret)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class InvalidURL(FetchError):
    """Not an absolute http(s) URL without userinfo, or plain http outside the trusted origins."""


class PrivateAddress(FetchError):
    """The host is, or resolves to, an address that is not publicly routable."""


class Unreachable(FetchError):
    """DNS, connect or read failed; ``timed_out`` tells a timeout apart."""

    def __init__(self, reason, timed_out=False):
        super().__init__(reason)
        self.timed_out = timed_out


class TooLarge(FetchError):
    """The body (declared or streamed) passed ``max_bytes``."""


class UnsupportedEncoding(FetchError):
    """The server sent a compressed body although we asked for identity."""


class TooManyRedirects(FetchError):
    pass


class Response:
    """The parts of an answer callers read, with the names ``requests`` uses."""

    def __init__(self, status, reason, headers, content, url):
        self.status_code = status
        self.reason = reason or ""
        self.headers = headers  # case-insensitive (urllib3's HTTPHeaderDict)
        self.content = content
        self.url = url

    @property
    def text(self):
        return self.content.decode("utf-8", errors="replace")

    def json(self):
        """The decoded JSON body; ``ValueError`` when it is not JSON."""
        return json.loads(self.content)


# --- addresses -----------------------------------------------------------------------------------
def is_public_address(address):
    """True when ``address`` (an IP literal, optionally with a ``%zone``) is publicly routable."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if ip.version == 6:
        if any(ip in network for network in _REFUSED_V6):
            return False
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is not None:
            return is_public_address(str(embedded))
    return ip.is_global and not (ip.is_multicast or ip.is_private or ip.is_loopback or ip.is_link_local
                                 or ip.is_reserved or ip.is_unspecified)


def may_reach_private(url):
    """Whether a server-side fetch of ``url`` may reach a non-public host: only when its origin is one
    the deployment wrote out in full (``origins.is_exact_trusted_origin``), never through a glob.

    The one rule for that decision (I8): the client asks it before connecting, and the checks made
    earlier by a URL's spelling (OIDC endpoints at registration, ``sso.discovery.check_endpoint``) ask
    the same, so nothing is accepted at registration that the fetch would then refuse, or the reverse.
    A glob such as ``https://*.corp.com`` vouches for browsers' origins; it does not name which hosts
    under it sit on the server's network. Raises ``origins.MalformedURL`` for a URL that does not parse.
    """
    return origins.is_exact_trusted_origin(url)


def _check_url(url, https_only):
    """``(parts, trusted)`` for a URL we may fetch, else :class:`InvalidURL`."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except (ValueError, TypeError, AttributeError):
        raise InvalidURL("malformed URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        raise InvalidURL("not an http(s) URL")
    try:
        trusted = may_reach_private(url)
    except APIError:  # origins.MalformedURL: not a URL we can fetch either
        raise InvalidURL("malformed URL") from None
    if https_only and scheme != "https" and not trusted:
        raise InvalidURL("plain http outside the trusted origins")
    return parts, trusted


def _resolve(parts, trusted):
    """``(host, addresses, port)``: the one lookup of this hop, every answer checked."""
    host = parts.hostname.strip("[]").rstrip(".")
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise Unreachable(f"cannot resolve {host}") from None
    addresses = list(dict.fromkeys(info[4][0] for info in answers))
    if not addresses:
        raise Unreachable(f"cannot resolve {host}")
    if not trusted and not all(is_public_address(address) for address in addresses):
        raise PrivateAddress(f"{host} is not a public address")
    return host, addresses, port


def _connection(parts, host, address, port, timeout):
    """A connection to the pinned ``address``; TLS sends SNI for ``host`` and verifies the certificate
    against ``host``, never against the address."""
    if parts.scheme.lower() == "https":
        return urllib3.connection.HTTPSConnection(address, port, timeout=timeout, cert_reqs="CERT_REQUIRED",
                                                  ca_certs=certifi.where(), server_hostname=host,
                                                  assert_hostname=host)
    return urllib3.connection.HTTPConnection(address, port, timeout=timeout)


def _connect(parts, host, addresses, port, timeout, deadline):
    """An open connection to one of the checked ``addresses``, tried in DNS order.

    A dual-stack name whose first (often IPv6) address is unreachable still works, as it did through
    ``requests``; every candidate was checked by :func:`_resolve`, none is looked up again. At most
    ``MAX_ADDRESSES`` are tried, within the deadline, so a long list of dead addresses costs little.
    """
    failure = None
    for address in addresses[:MAX_ADDRESSES]:
        if failure is not None and time.monotonic() > deadline:
            break
        connection = _connection(parts, host, address, port, timeout)
        try:
            connection.connect()
            return connection
        except (urllib3.exceptions.HTTPError, OSError, CertificateError) as exc:
            connection.close()
            failure = exc
    raise failure


class _Watchdog:
    """Cuts the connection at the overall deadline.

    The socket timeout bounds each read, not the whole: a server dripping its status line or headers
    one byte per read would otherwise hold the worker for as many timeouts as it sends bytes (I6).
    Shutting the socket down from this thread wakes the blocked read, which then fails.
    """

    def __init__(self, connection, seconds):
        self.connection = connection
        self.fired = False
        self.timer = threading.Timer(max(seconds, 0), self._cut)
        self.timer.daemon = True
        self.timer.start()

    def _cut(self):
        self.fired = True
        sock = self.connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                # The plain socket's shutdown: SSLSocket.shutdown would also drop its TLS state under
                # the reading thread.
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def cancel(self):
        self.timer.cancel()


def _read_capped(response, limit, deadline):
    length = response.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > limit:
        raise TooLarge(f"body over {limit} bytes")
    encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding != "identity":
        raise UnsupportedEncoding(f"unsupported Content-Encoding {encoding}")
    body = bytearray()
    while True:
        if time.monotonic() > deadline:
            raise Unreachable("timed out", timed_out=True)
        # read1, not stream(): stream(n) waits for n bytes, so a server dripping one byte per read
        # timeout would hold the worker for n timeouts; read1 returns what has arrived.
        chunk = response.read1(8192, decode_content=False)
        if not chunk:
            return bytes(body)
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"body over {limit} bytes")


def request(method, url, *, timeout, headers=None, data=None, max_bytes=DEFAULT_MAX_BYTES,
            max_redirects=0, https_only=False):
    """The :class:`Response` to ``method url`` under the rules above; refusals raise :class:`FetchError`.

    ``data`` (a dict) is sent form-encoded. With ``max_redirects=0`` a 3xx answer is returned as is;
    otherwise a GET follows up to ``max_redirects`` hops, each checked like the first.
    """
    headers = dict(headers or {})
    body = None
    if data is not None:
        body = urlencode(data).encode()
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    deadline = time.monotonic() + 3 * timeout
    for _hop in range(max_redirects + 1):
        if time.monotonic() > deadline:  # a chain of slow redirects shares the one deadline
            raise Unreachable("timed out", timed_out=True)
        parts, trusted = _check_url(url, https_only)
        host, addresses, port = _resolve(parts, trusted)
        connection = watchdog = None
        try:
            connection = _connect(parts, host, addresses, port, timeout, deadline)
            watchdog = _Watchdog(connection, deadline - time.monotonic())
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            connection.request(method, target, body=body, headers={
                "User-Agent": USER_AGENT, **headers, "Host": parts.netloc.rsplit("@", 1)[-1],
                "Accept-Encoding": "identity"}, preload_content=False, decode_content=False)
            response = connection.getresponse()
            location = response.headers.get("Location")
            if max_redirects and method == "GET" and response.status in REDIRECT_STATUSES and location:
                url = urljoin(url, location)
                continue
            content = _read_capped(response, max_bytes, deadline)
            return Response(response.status, response.reason, response.headers, content, url)
        except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError, CertificateError) as exc:
            # urllib3 2 makes a refused connection (NewConnectionError) a ConnectTimeoutError too.
            timed_out = (watchdog is not None and watchdog.fired) or (
                isinstance(exc, (urllib3.exceptions.TimeoutError, TimeoutError))
                and not isinstance(exc, urllib3.exceptions.NewConnectionError))
            raise Unreachable("timed out" if timed_out else exc.__class__.__name__, timed_out=timed_out) from None
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if connection is not None:
                connection.close()
    raise TooManyRedirects("too many redirects")
