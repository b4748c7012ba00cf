"""Trusted origins, callback-URL validation and the Origin check (core.md §1.8, §1.9).

No open redirect: a URL field is accepted only when it is a trusted absolute URL or a relative path
that cannot leave the origin (``//evil``, ``/\\evil``, ``/%2fevil`` and ``javascript:`` all fail).

Every URL is parsed here by :func:`parse` alone, so every caller gets the same answer for the same
text (I4): a value that does not parse is malformed input, a 400 :class:`MalformedURL`, never a 500
and never "trusted by accident". A glob entry (``*.example.com``, ``https://*.example.com``) only ever
matches an http(s) URL: ``javascript://app.example.com/%0aalert(1)`` has that host, but it is a script.
A glob's wildcards are better-auth's: ``*`` (any run of characters) and ``?`` (one); every other character,
``[`` and ``]`` included, is itself, so ``http://[::1]:*`` is any port of the IPv6 loopback, never a class.
"""

import functools
import logging
import posixpath
import re
from urllib.parse import urljoin, urlsplit

from authservice import app_settings
from authservice.errors import APIError, codes

HTTP_SCHEMES = ("http", "https")
# Schemes a browser runs or renders as a document of its own: never a trusted origin, even if listed.
_ACTIVE_SCHEMES = ("javascript", "vbscript", "data", "blob", "file", "about", "filesystem")
MALFORMED_URL_MESSAGE = "Invalid URL: it cannot be parsed"

_extra_origins = []  # added by plugins through add_trusted_origins()

# INFO: a refused Origin is what a developer debugging "403 INVALID_ORIGIN" from a new SPA needs to see.
logger = logging.getLogger("authservice.origins")


def add_trusted_origins(origins):
    """Let a plugin trust more origins (like better-auth's plugin ``trustedOrigins``)."""
    _extra_origins.extend(origins)
    reset()


def reset():
    trusted_origins.cache_clear()
    _entries.cache_clear()


class MalformedURL(APIError):
    """A URL that cannot be parsed: bad input (400 VALIDATION_ERROR), not an untrusted URL (I4)."""

    def __init__(self):
        super().__init__(400, codes.VALIDATION_ERROR, MALFORMED_URL_MESSAGE)


def parse(url):
    """``urlsplit(url)`` with its lazy parts (port, host) checked now; raises :class:`MalformedURL`.

    ``urlsplit`` accepts ``http://[bad`` and only fails when ``.hostname`` or ``.port`` is read, which
    is how a 500 escaped before: every reader of a URL goes through here instead.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed or out-of-range port
        parts.hostname  # noqa: B018
    except (ValueError, TypeError, AttributeError):
        raise MalformedURL() from None
    return parts


def _origin(parts):
    if not parts.scheme or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def origin_of(url):
    """``scheme://host[:port]`` with the default port dropped, or ``None`` (also when malformed)."""
    try:
        return _origin(parse(url))
    except MalformedURL:
        return None


def is_http_url(url):
    """An absolute http(s) URL with a host that parses cleanly: the only kind of location we store,
    redirect to or hand to a browser (I4). Control characters, backslashes and spaces are refused
    because a browser would read such a URL differently from this parser."""
    if not isinstance(url, str) or not url:
        return False
    if any(ord(char) <= 0x20 or ord(char) == 0x7F or char == "\\" for char in url):
        return False
    try:
        parts = parse(url)
    except MalformedURL:
        return False
    return parts.scheme.lower() in HTTP_SCHEMES and bool(parts.hostname)


@functools.lru_cache(maxsize=1)
def trusted_origins():
    entries = []
    if app_settings.base_url:
        entries.append(origin_of(app_settings.base_url))
    entries += list(app_settings.trusted_origins) + _extra_origins
    return tuple(entry.rstrip("/") if "://" in entry else entry for entry in entries if entry)


@functools.lru_cache(maxsize=1)
def _entries():
    """``(entry, parsed entry)`` per trusted origin; an entry that does not parse matches nothing."""
    parsed = []
    for entry in trusted_origins():
        try:
            parsed.append((entry, None if "*" in entry or "?" in entry else parse(entry)))
        except MalformedURL:
            continue
    return tuple(parsed)


def glob_body(glob):
    """The regex for ``glob``: ``*`` any run of characters, ``?`` one, everything else literal.

    project/cors.py translates globs for django-cors-headers with a copy of this (it cannot import
    authservice before Django is set up); tests/test_cors.py checks that both trust the same origins.
    """
    return "".join(".*" if char == "*" else "." if char == "?" else re.escape(char) for char in glob)


def _glob_matches(glob, text):
    return re.fullmatch(glob_body(glob.lower()), text, re.DOTALL) is not None


def _matches(entry, entry_parts, parts):
    scheme = parts.scheme.lower()
    if entry_parts is None:  # a glob
        # I4: a glob matches http(s) only. A host-only glob said nothing about the scheme, and
        # ``javascript://app.example.com/...`` has a matching host.
        if scheme not in HTTP_SCHEMES or not parts.hostname:
            return False
        if "://" in entry:
            return _glob_matches(entry, _origin(parts))
        return _glob_matches(entry, parts.hostname.lower())
    if entry_parts.scheme.lower() in HTTP_SCHEMES:
        return _origin(parts) == _origin(entry_parts)
    # Custom schemes (myapp://, exp://): scheme, then host, then a path prefix if the entry has one.
    if scheme != entry_parts.scheme.lower() or scheme in _ACTIVE_SCHEMES:
        return False
    if entry_parts.netloc and entry_parts.netloc.lower() != parts.netloc.lower():
        return False
    if entry_parts.path and entry_parts.path != "/":
        path = posixpath.normpath(parts.path or "/")
        base = entry_parts.path.rstrip("/")
        return path == base or path.startswith(base + "/")
    return True


def is_trusted_origin(url):
    """True when the absolute ``url`` lies in a trusted origin; :class:`MalformedURL` when it does not parse."""
    if not isinstance(url, str) or not url or "://" not in url:
        return False
    if any(ord(char) < 0x20 or ord(char) == 0x7F or char == "\\" for char in url):
        return False
    parts = parse(url)
    return any(_matches(entry, entry_parts, parts) for entry, entry_parts in _entries())


def is_exact_trusted_origin(url):
    """True when the absolute http(s) ``url`` has the scheme and host of a trusted entry written out in
    full (its origin exactly, or any port of it for ``scheme://host:*``), never a host matched by a
    glob: what may reach a private address on the server's side (I8). A glob such as
    ``*.example.com`` vouches for browsers' origins, not for which internal hosts under that name
    the server may connect to."""
    if not is_trusted_origin(url):
        return False
    parts = parse(url)
    origin = _origin(parts)
    for entry, entry_parts in _entries():
        if entry_parts is None:
            # The one glob that names its host exactly: ``http://127.0.0.1:*`` (any port of one
            # host the deployment wrote out, as a local IdP on a random port needs).
            base, _, port = entry.lower().rpartition(":")
            if port == "*" and "://" in base and not any(char in base for char in "*?"):
                scheme, _, host = base.partition("://")
                if scheme == parts.scheme.lower() and host.strip("[]") == (parts.hostname or "").lower():
                    return True
        elif entry_parts.scheme.lower() in HTTP_SCHEMES and _origin(entry_parts) == origin:
            return True
    return False


_ENCODED_SLASH = re.compile(r"%(2f|5c)", re.IGNORECASE)


def is_safe_relative(url):
    """A path that stays on our origin whatever the browser makes of it."""
    if not url.startswith("/") or url.startswith("//"):
        return False
    if "\\" in url or any(ord(char) < 0x20 or ord(char) == 0x7F for char in url):
        return False
    path = url.split("?", 1)[0].split("#", 1)[0]
    if _ENCODED_SLASH.search(path):
        return False
    dummy = "http://relative.invalid"
    return origin_of(urljoin(dummy + "/", url)) == dummy


def is_allowed_url(url):
    """The rule for every callback/redirect URL field."""
    if app_settings.disable_origin_check:
        return True
    return is_safe_relative(url) or is_trusted_origin(url)


def log_refused(origin):
    """Log, at INFO, a request refused by the Origin check: the Origin it sent and the trusted list.

    ``%r`` quotes the header, so a control character in it cannot forge a log line; a long one is cut."""
    if origin is None:
        logger.info("Refused a request without an Origin (or with Origin: null); trusted origins: %s",
                    ", ".join(trusted_origins()))
    else:
        logger.info("Refused Origin %.200r: not a trusted origin; trusted origins: %s",
                    origin, ", ".join(trusted_origins()))


def request_origin(headers):
    """The Origin header, else the Referer's origin; ``None`` when absent, empty or ``null``."""
    origin = headers.get("origin")
    if not origin:
        referer = headers.get("referer")
        origin = origin_of(referer) if referer else None
    if not origin or origin == "null":
        return None
    return origin
