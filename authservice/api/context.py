"""What a handler sees: validated input, headers, cookies, the session, and what to send back.

Built the same way for an HTTP request and for an in-process call, so both run the same code.
"""

import ipaddress

from authservice import app_settings, cookies


_UNPREFIXED = frozenset({"CONTENT_TYPE", "CONTENT_LENGTH"})  # PEP 3333's headers without HTTP_


class Headers:
    """Case-insensitive headers that keep repeated values (``Set-Cookie``)."""

    def __init__(self, items=None):
        self._items = []
        if items is None:
            return
        pairs = items.items() if hasattr(items, "items") else items
        for key, value in pairs:
            if isinstance(value, (list, tuple)):
                for item in value:
                    self.add(key, item)
            elif value is not None:
                self.add(key, value)

    @classmethod
    def of_request(cls, request):
        """``Headers(request.headers)``, read from the WSGI environ without building Django's ``HttpHeaders``
        first. The same names in the same order: ``HTTP_*`` keys and the two PEP 3333 keys without the
        prefix, named as ``HttpHeaders.parse_header_name`` names them, the last of two keys naming one
        header winning in the place of the first (``CONTENT_TYPE`` and ``HTTP_CONTENT_TYPE``), as there."""
        found = {}
        for key, value in request.META.items():
            if key.startswith("HTTP_"):
                key = key[5:]
            elif key not in _UNPREFIXED:
                continue
            if key:
                found[key.replace("_", "-").title().lower()] = value
        return cls(found.items())

    def add(self, key, value):
        self._items.append((key.lower(), str(value)))

    def set(self, key, value):
        key = key.lower()
        self._items = [(k, v) for k, v in self._items if k != key]
        self._items.append((key, str(value)))

    def get(self, key, default=None):
        values = self.get_list(key)
        return ", ".join(values) if values else default

    def get_list(self, key):
        key = key.lower()
        return [v for k, v in self._items if k == key]

    def items(self):
        return list(self._items)

    def __contains__(self, key):
        return bool(self.get_list(key))

    def __getitem__(self, key):
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __repr__(self):
        return f"Headers({self._items!r})"


class Redirect:
    """A handler's answer that is a real 302 (core.md §1.7)."""

    def __init__(self, location):
        self.location = location


class Context:
    def __init__(self, endpoint, *, headers, body=None, query=None, params=None, request=None):
        self.endpoint = endpoint
        self.request = request
        self.headers = headers if isinstance(headers, Headers) else Headers(headers)
        self.has_headers = headers is not None
        self.body = body if body is not None else {}
        self.query = query if query is not None else {}
        self.params = params or {}
        self.cookies = cookies.parse_cookie_header(self.headers.get("cookie"))
        self.status_code = 200
        self.response_headers = Headers()
        # name -> (value, attributes); the last write of one cookie wins, as in a browser.
        self.response_cookies = {}
        self._session = None
        self._session_loaded = False
        self._session_vanished = False  # the session was deleted while being refreshed
        self._session_cached = False  # get-session answered from the cookie cache (cookie_cache.py)

    # --- cookies -----------------------------------------------------------------------------
    def set_cookie(self, key, value, max_age=None):
        self.response_cookies[cookies.cookie_name(key)] = (value, cookies.attributes(max_age, key))

    def delete_cookie(self, key):
        self.response_cookies[cookies.cookie_name(key)] = ("", cookies.attributes(0, key))

    def signed_cookie(self, key):
        return cookies.read_signed(self.cookies, key)

    # --- the client ----------------------------------------------------------------------------
    @property
    def user_agent(self):
        return self.headers.get("user-agent", "") or ""

    @property
    def client_ip(self):
        return client_ip(self.headers, self.request.META.get("REMOTE_ADDR") if self.request else None)


def normalize_ip(value):
    """IPv4-mapped IPv6 as IPv4; IPv6 reduced to its /64, written as 8 zero-padded groups."""
    try:
        address = ipaddress.ip_address(value.strip())
    except (ValueError, AttributeError):
        return None
    if address.version == 6:
        if address.ipv4_mapped:
            return str(address.ipv4_mapped)
        network = ipaddress.ip_network(f"{address}/64", strict=False)
        return network.network_address.exploded
    return str(address)


def client_ip(headers, remote_addr):
    """The socket address, unless the deployment names its proxy's header [D9]."""
    header = app_settings.ip_address_header
    if header:
        values = [v.strip() for v in (headers.get(header) or "").split(",") if v.strip()]
        hops = max(1, int(app_settings.trusted_proxy_count))
        if len(values) >= hops:
            found = normalize_ip(values[-hops])
            if found:
                return found
    return normalize_ip(remote_addr or "") or ""
