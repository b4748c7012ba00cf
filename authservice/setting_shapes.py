"""The shapes of authservice's compound settings: trusted origins, the base path, rate-limit rules and
social providers, in the vocabulary of :mod:`authservice.setting_types`."""

import datetime
import re

from authservice.setting_types import URL, Bool, DottedPath, Int, ListOf, Str, Type, short


def _keeps_a_fixed_domain(glob):
    """Whether the host part of a glob ends in a fixed ``.domain`` after its last wildcard:
    ``*.example.com`` and ``app-?.example.com`` do; ``*``, ``*.*``, ``*example.com`` and ``*a*`` do not."""
    host = glob.split("://", 1)[-1].split("/", 1)[0]
    if host.startswith("[") and "]" in host:  # a bracketed IPv6 address keeps its colons
        host = host[:host.index("]") + 1]
    else:
        host = host.rsplit(":", 1)[0]
    last = max(host.rfind("*"), host.rfind("?"))
    if last < 0:
        return True  # the wildcard is in the scheme or the port: the host is written out
    tail = host[last + 1:]
    return tail.startswith(".") and any(char.isalnum() for char in tail)


class Origin(Type):
    """A trusted-origin entry as :mod:`authservice.origins` reads it: ``https://app.example.com``, a
    custom scheme (``myapp://``), or a glob (``*.example.com``, ``https://*.example.com``)."""

    kind = "origin"
    emits = ("origin", "origin_path", "origin_everything")
    label = "an origin (scheme://host[:port]) or a glob"

    def problems(self, value, name):
        from authservice import origins  # noqa: PLC0415 - origins reads app_settings

        if not isinstance(value, str):
            return [self.wrong_type(value, name)]
        hint = "Write scheme://host[:port], e.g. https://app.example.com, or a glob such as *.example.com."
        if not value.strip() or value != value.strip():
            return [self.problem(name, f"is not an origin: {value!r}", hint)]
        if "*" in value or "?" in value:
            if not _keeps_a_fixed_domain(value):
                return [self.problem(name, f"{value!r} trusts origins outside any one domain (every origin, "
                                     "or look-alikes such as evilexample.com)", "List the origins of your "
                                     "own apps instead; a glob should keep a fixed domain (*.example.com).",
                                     kind="origin_everything", warning=True)]
            return []
        if "://" not in value:
            return [self.problem(name, f"has no scheme, so it matches nothing: {value!r}",
                                 f"Write https://{value} (or a glob, *.{value}).")]
        try:
            parts = origins.parse(value.rstrip("/"))
        except origins.MalformedURL:
            return [self.problem(name, f"cannot be parsed: {value!r}", hint)]
        scheme = parts.scheme.lower()
        if scheme in origins.HTTP_SCHEMES and not parts.hostname or scheme in origins._ACTIVE_SCHEMES:
            return [self.problem(name, f"can never be trusted: {value!r}", hint)]
        if scheme in origins.HTTP_SCHEMES and (parts.path not in ("", "/") or parts.query or parts.fragment):
            return [self.problem(name, f"has a path, which is ignored: only {origins.origin_of(value)} is "
                                 "compared", f"Write {origins.origin_of(value)}.", kind="origin_path",
                                 warning=True)]
        return []


class BasePath(Type):
    kind = "base_path"
    emits = ("base_path",)
    label = "a path starting with '/', not ending with it"
    check_id = "authservice.E002"

    def problems(self, value, name):
        if not isinstance(value, str):
            return [self.wrong_type(value, name)]
        if value.startswith("/") and (value == "/" or not value.endswith("/")) and "//" not in value:
            return []
        return [self.problem(name, "must start with '/' and not end with it", "e.g. '/api/auth'.")]


class RateRules(Type):
    """``{"/path" or glob: {"window": s, "max": n} or False}``, paths relative to the base path."""

    kind = "rate_rule"
    emits = ("rate_rule", "range")
    label = 'a dict {"/path" or glob: {"window": seconds, "max": n} or False}'

    def problems(self, value, name):
        if not isinstance(value, dict):
            return [self.wrong_type(value, name)]
        found = []
        for pattern, rule in value.items():
            at = f"{name}[{pattern!r}]"
            if not isinstance(pattern, str) or not pattern.startswith("/"):
                found.append(self.problem(at, "is not a path: keys start with '/' (e.g. '/sign-in/*')",
                                          "Write the path relative to base_path, e.g. '/sign-in/email'."))
            if rule is False:
                continue
            if not isinstance(rule, dict) or set(rule) != {"window", "max"}:
                found.append(self.problem(at, f"must be False or {{'window': seconds, 'max': n}}, not "
                                          f"{short(rule)}", "False lifts the limit; otherwise give both "
                                          "'window' and 'max' and nothing else."))
                continue
            for key in ("window", "max"):
                found += Int().problems(rule[key], f"{at}[{key!r}]")
        return found


class SocialProviders(Type):
    """``{id: {"clientId": ..., ...}}``; the class is ``"class"``, else the built-in ``"type"`` or id."""

    kind = "social_provider"
    emits = ("social_provider", "import", "url")
    label = 'a dict {provider id: {"clientId": ..., "clientSecret": ..., ...}}'
    URLS = ("issuer", "authorizationEndpoint", "tokenEndpoint", "userInfoEndpoint", "jwksUri", "redirectURI")

    def problems(self, value, name):
        from authservice.social.registry import BUILT_IN  # noqa: PLC0415 - apps must be loaded

        if not isinstance(value, dict):
            return [self.wrong_type(value, name)]
        found = []
        for provider_id, entry in value.items():
            at = f"{name}[{provider_id!r}]"
            if not isinstance(entry, dict):
                found.append(self.wrong_type(entry, at, 'Give a dict such as {"clientId": "...", '
                                             '"clientSecret": "..."}.'))
                continue
            kind = entry.get("type") or provider_id
            if entry.get("class"):
                found += DottedPath("a provider class").problems(entry["class"], f"{at}['class']")
            elif kind not in BUILT_IN:
                found.append(self.problem(at, f"is no built-in provider: {kind!r}",
                                          f"Name one of {', '.join(sorted(BUILT_IN))} as its id or 'type', or "
                                          "give 'class': a dotted path to your provider class."))
            client_id = entry.get("clientId")
            if not (isinstance(client_id, str) and client_id) and not entry.get("appBundleIdentifier"):
                found.append(self.problem(at, "has no 'clientId'", "Copy the client id from the provider's "
                                          "developer console."))
            if kind == "oidc" and not entry.get("class") and not entry.get("issuer"):
                found.append(self.problem(at, "has no 'issuer'", "A generic OIDC provider is discovered from "
                                          "its issuer URL, e.g. https://login.example.com."))
            for key in self.URLS:
                if entry.get(key) is not None:
                    found += URL().problems(entry[key], f"{at}[{key!r}]")
            for key in ("enabled", "disableSignUp", "disableImplicitSignUp", "disableDefaultScope"):
                if key in entry:
                    found += Bool().problems(entry[key], f"{at}[{key!r}]")
            if "scopes" in entry:
                found += ListOf(Str()).problems(entry["scopes"], f"{at}['scopes']")
        return found


class AdditionalFields(Type):
    """``{"favoriteColor": {"type": "string", "required": False, ...}}`` (authservice.additional_fields)."""

    kind = "additional_field"
    emits = ("additional_field",)
    label = 'a dict {wire name: {"type": "string", "required": ..., "default_value": ..., ...}}'

    def problems(self, value, name):
        from authservice import additional_fields  # noqa: PLC0415 - it reads app_settings

        if not isinstance(value, dict):
            return [self.wrong_type(value, name)]
        found = []
        for key, declaration in value.items():
            at = f"{name}[{key!r}]"
            if not isinstance(key, str) or not _IDENTIFIER.match(key):
                found.append(self.problem(at, "is not a field name", "Use letters, digits and '_' "
                                          "(better-auth's camelCase, e.g. 'favoriteColor')."))
                continue
            if key in additional_fields.RESERVED_KEYS:
                found.append(self.problem(at, "shadows a field better-auth itself sends or reads",
                                          "Choose another name; name, image and e-mail are handled already."))
                continue
            if not isinstance(declaration, dict):
                found.append(self.wrong_type(declaration, at, 'Give a dict such as {"type": "string"}.'))
                continue
            found += self._declaration(declaration, at, additional_fields)
        return found

    def _declaration(self, declaration, at, additional_fields):
        found = []
        unknown = [option for option in declaration if option not in additional_fields.OPTIONS]
        if unknown:
            found.append(self.problem(at, f"has unknown options: {', '.join(map(repr, unknown))}",
                                      f"Options are {', '.join(additional_fields.OPTIONS)} (snake_case: "
                                      "default_value, field_name)."))
        kind = declaration.get("type")
        if kind not in additional_fields.TYPES:
            found.append(self.problem(f"{at}['type']", f"must be one of {', '.join(additional_fields.TYPES)}, "
                                      f"not {short(kind)}", "better-auth's field types, e.g. 'string'."))
        for option in ("required", "input", "returned"):
            if option in declaration:
                found += Bool().problems(declaration[option], f"{at}[{option!r}]")
        field_name = declaration.get("field_name")
        if field_name is not None and not (isinstance(field_name, str) and _IDENTIFIER.match(field_name)):
            found.append(self.problem(f"{at}['field_name']", f"is not a model field name: {short(field_name)}",
                                      "Give the name of the user model's field (snake_case)."))
        default = declaration.get("default_value")
        if default is not None and not callable(default) and kind in additional_fields.TYPES \
                and not _holds(kind, default):
            found.append(self.problem(f"{at}['default_value']", f"is not a {kind}: {short(default)}",
                                      "Give a value of the declared type, or a callable returning one."))
        if declaration.get("required") is True and declaration.get("input") is False \
                and "default_value" not in declaration:
            found.append(self.problem(at, "is required but clients may not set it, and has no default: "
                                      "every sign-up would fail", "Give it a default_value, or drop "
                                      "required or input: False."))
        return found


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _holds(kind, value):
    def number(item):
        return isinstance(item, (int, float)) and not isinstance(item, bool)

    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return number(value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "date":
        return isinstance(value, datetime.datetime)
    if kind == "string[]":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return isinstance(value, list) and all(number(item) for item in value)


class RequiredFor(Type):
    """Who must enrol a second factor: ``None``, user attributes that are true for them
    (``["is_staff", "is_superuser"]``), or a dotted path to ``callable(user) -> bool``."""

    label = "None, a list of user attribute names, or a dotted path to a callable"

    def problems(self, value, name):
        if value is None:
            return []
        if isinstance(value, str):
            return DottedPath().problems(value, name)
        return ListOf(Str()).problems(value, name)
