"""Trusted origins, callback-URL validation and the Origin check (core.md §1.8, §1.9).

No open redirect: a URL field is accepted only when it is a trusted absolute URL or a relative path
that cannot leave the origin (``//evil``, ``/\\evil``, ``/%2fevil`` and ``javascript:`` all fail).
"""

import fnmatch
import functools
import posixpath
import re
from urllib.parse import urljoin, urlsplit

from authservice import app_settings

_extra_origins = []  # added by plugins through add_trusted_origins()


def add_trusted_origins(origins):
    """Let a plugin trust more origins (like better-auth's plugin ``trustedOrigins``)."""
    _extra_origins.extend(origins)
    reset()


def reset():
    trusted_origins.cache_clear()


def origin_of(url):
    """``scheme://host[:port]`` with the default port dropped, or ``None``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


@functools.lru_cache(maxsize=1)
def trusted_origins():
    entries = []
    if app_settings.base_url:
        entries.append(origin_of(app_settings.base_url))
    entries += list(app_settings.trusted_origins) + _extra_origins
    return tuple(entry.rstrip("/") if "://" in entry else entry for entry in entries if entry)


def _matches(entry, url):
    if "*" in entry or "?" in entry:
        if "://" in entry:
            origin = origin_of(url)
            return origin is not None and fnmatch.fnmatchcase(origin, entry.lower())
        host = urlsplit(url).hostname or ""
        return fnmatch.fnmatchcase(host.lower(), entry.lower())
    entry_parts = urlsplit(entry)
    if entry_parts.scheme in ("http", "https"):
        return origin_of(url) == origin_of(entry)
    # Custom schemes (myapp://, exp://): scheme, then host, then a path prefix if the entry has one.
    url_parts = urlsplit(url)
    if url_parts.scheme.lower() != entry_parts.scheme.lower():
        return False
    if entry_parts.netloc and entry_parts.netloc.lower() != url_parts.netloc.lower():
        return False
    if entry_parts.path and entry_parts.path != "/":
        path = posixpath.normpath(url_parts.path or "/")
        base = entry_parts.path.rstrip("/")
        return path == base or path.startswith(base + "/")
    return True


def is_trusted_origin(url):
    """True when the absolute ``url`` lies in a trusted origin."""
    if not isinstance(url, str) or not url or "://" not in url:
        return False
    if any(ord(char) < 0x20 or char in "\\" for char in url):
        return False
    return any(_matches(entry, url) for entry in trusted_origins())


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


def request_origin(headers):
    """The Origin header, else the Referer's origin; ``None`` when absent, empty or ``null``."""
    origin = headers.get("origin")
    if not origin:
        referer = headers.get("referer")
        origin = origin_of(referer) if referer else None
    if not origin or origin == "null":
        return None
    return origin
