"""One declaration per endpoint; the HTTP route and the in-process function both come from it.

::

    @endpoint("POST", "/sign-in/email", name="sign_in_email", body=SignInEmailInput,
              login_csrf=True, form=True, no_store=True)
    def sign_in_email(ctx):
        ...

The HTTP router (``api/dispatch.py``) matches ``registry`` entries; ``auth.api.sign_in_email(...)``
runs the same endpoint in-process. Plugins declare endpoints the same way from their own modules and
list those modules in ``AppConfig.ready()``.
"""

import re
from dataclasses import dataclass, field

_PARAM = re.compile(r":([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Endpoint:
    method: str
    path: str
    handler: object
    name: str
    body: type | None = None  # Input class of the JSON/form body
    body_optional: bool = False  # a missing body counts as {}
    query: type | None = None  # Input class of the query string
    guard: str | None = None  # None, "session", "sensitive" or "fresh" (core.md §3.4)
    login_csrf: bool = False  # sign-in/sign-up's extra CSRF step (core.md §1.8)
    form: bool = False  # also accepts application/x-www-form-urlencoded
    headers_required: bool = False  # in-process calls must pass headers (core.md §1.10)
    no_store: bool = False  # Cache-Control: no-store on every answer
    origin_check: bool = True  # the router-wide Origin check (off only for IdP posts, e.g. SAML ACS)
    summary: str = ""
    response: object = None  # OpenAPI description of the success body
    redirects: bool = False  # may answer a real 302 (core.md §1.7); documented in OpenAPI
    tags: tuple = ()
    extra: dict = field(default_factory=dict)
    # A plugin's switch, read per call: while it answers False the endpoint has no route, no
    # in-process function and no OpenAPI entry, as if it were never declared.
    enabled: object = None
    # Answers a session whose user must still enrol a second factor (two_factor.required_for);
    # every other endpoint refuses it with 403 TWO_FACTOR_ENROLLMENT_REQUIRED (two_factor/policy.py).
    during_enrolment: bool = False

    @property
    def is_enabled(self):
        return self.enabled is None or bool(self.enabled())

    def __post_init__(self):
        self.method = self.method.upper()
        self.param_names = _PARAM.findall(self.path)
        if self.param_names:
            regex = _PARAM.sub(r"(?P<\1>[^/]+)", re.escape(self.path).replace(r"\:", ":"))
            self.pattern = re.compile(f"^{regex}$")
        else:
            self.pattern = None

    def match(self, path):
        """Path parameters when ``path`` is this endpoint's, else ``None``."""
        if self.pattern is None:
            return {} if path == self.path else None
        found = self.pattern.match(path)
        return found.groupdict() if found else None


class Registry:
    def __init__(self):
        self._by_name = {}
        self._static = {}
        self._patterned = []

    def add(self, endpoint):
        if endpoint.name in self._by_name:
            raise ValueError(f"Endpoint {endpoint.name!r} is declared twice")
        self._by_name[endpoint.name] = endpoint
        if endpoint.pattern is None:
            self._static[(endpoint.method, endpoint.path)] = endpoint
        else:
            self._patterned.append(endpoint)
        return endpoint

    def resolve(self, method, path):
        """``(endpoint, params)`` for a request, or ``(None, None)``."""
        endpoint = self._static.get((method, path))
        if endpoint is not None:
            return (endpoint, {}) if endpoint.is_enabled else (None, None)
        for candidate in self._patterned:
            if candidate.method == method and candidate.is_enabled:
                params = candidate.match(path)
                if params is not None:
                    return candidate, params
        return None, None

    def get(self, name):
        return self._by_name[name]

    def __iter__(self):
        return iter([endpoint for endpoint in self._by_name.values() if endpoint.is_enabled])

    def __contains__(self, name):
        return name in self._by_name and self._by_name[name].is_enabled


registry = Registry()


def endpoint(method, path, *, name, **options):
    """Declare ``handler(ctx)`` as the endpoint ``method path``."""

    def decorate(handler):
        registry.add(Endpoint(method=method, path=path, handler=handler, name=name, **options))
        return handler

    return decorate
