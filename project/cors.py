"""django-cors-headers' allow-lists from the origins authservice trusts, so one list governs both.

A page on another origin calls the API with ``fetch(url, {credentials: "include"})``. Its browser first
sends a preflight and reads the answer only if the preflight names the page's origin and allows
credentials; django-cors-headers answers it. CORS decides only what a trusted page may *read*: every
cookie-carrying write is still refused by authservice's Origin check unless its Origin is trusted.

:func:`allowed_origins` turns ``AUTHSERVICE["base_url"]`` and ``["trusted_origins"]`` into
``CORS_ALLOWED_ORIGINS`` (exact origins) and ``CORS_ALLOWED_ORIGIN_REGEXES`` (globs), with the matching
rules of ``authservice.origins``:

- ``https://app.example.com`` (a path or trailing slash is dropped): that origin exactly;
- ``https://*.example.com``: a glob over the whole origin, ``http://127.0.0.1:*`` any port of one host;
- ``*.example.com``: a glob over the host, http or https, any port;
- a glob's wildcards are better-auth's, ``*`` and ``?``; ``[``/``]`` are literal (``http://[::1]:*``);
- letters compare case-insensitively; a glob never matches another scheme than http(s);
- ``myapp://`` and other custom schemes are for native apps, which send no preflight: left out.

Every regex is anchored at both ends and also requires the text to have the shape of an origin
(scheme, host, optional port, nothing else), so a ``*`` cannot stretch over a userinfo, a path or a
second port: ``https://*.example.com`` matches ``https://app.example.com`` but neither
``https://evil-example.com`` nor ``https://x.example.com.evil.com``.

Plain Python with no Django import: a settings module calls it before Django is set up.
"""

import re
from urllib.parse import urlsplit

HTTP_SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# What a browser's Origin header looks like: scheme://host[:port], the host a DNS name, an IPv4 address
# or a bracketed IPv6 address.
_ORIGIN_SHAPE = r"https?://(?:[a-z0-9_.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?"


def _is_glob(entry):
    return "*" in entry or "?" in entry  # authservice.origins' own test for a glob entry


def _glob_body(glob):
    """``*`` any run of characters, ``?`` one, everything else literal: authservice.origins.glob_body."""
    return "".join(".*" if char == "*" else "." if char == "?" else re.escape(char) for char in glob.lower())


def exact_origin(entry):
    """``scheme://host[:port]`` of an http(s) entry, lower-cased, the default port dropped; else ``None``."""
    try:
        parts = urlsplit(entry.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in HTTP_SCHEMES or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def glob_regex(entry):
    """The anchored, case-insensitive regex for a glob entry; ``None`` for a glob of another scheme."""
    glob = entry.strip().rstrip("/")
    shape = rf"(?=(?:{_ORIGIN_SHAPE})\Z)"
    if "://" in glob:
        if glob.split("://", 1)[0].lower() not in HTTP_SCHEMES:
            return None
        return rf"(?i)^{shape}(?:{_glob_body(glob)})\Z"
    return rf"(?i)^{shape}https?://(?:{_glob_body(glob)})(?::[0-9]{{1,5}})?\Z"


def allowed_origins(entries):
    """``(CORS_ALLOWED_ORIGINS, CORS_ALLOWED_ORIGIN_REGEXES)`` for trusted-origin ``entries``."""
    exact, regexes = [], []
    for entry in entries:
        if not entry:
            continue
        if _is_glob(entry):
            found, target = glob_regex(entry), regexes
        else:
            found, target = exact_origin(entry), exact
        if found and found not in target:
            target.append(found)
    return exact, regexes
