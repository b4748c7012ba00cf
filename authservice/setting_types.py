"""What each settings key may hold: checked by the system checks, shown in the settings reference.

A key's type is derived from its default (``True`` → :class:`Bool`, ``3600`` → a positive
:class:`Int`, ``"x"`` → :class:`Str`, ``[]`` → a list, ``{...}`` → a section of more keys) unless the
app's ``TYPES`` dict declares it, which it must where the default is ``None`` or the derived type is
too loose (a URL, a dotted path, a duration that may be 0). A new setting is thus validated without a
new check.

A type reports :class:`Problem` s of a *kind* ("type", "range", "url", ...); each app maps kinds to its
own stable check ids (``authservice/checks.py``, ``sso/checks.py``). Validators never raise on odd
values: :func:`validate` turns any exception into a "check_failed" problem, because a system check
that crashes hides every other message.
"""

import re
from dataclasses import dataclass

from django.utils.module_loading import import_string

# RFC 6265 cookie-name (an RFC 7230 token): what a browser keeps byte for byte.
_COOKIE_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")


@dataclass(frozen=True)
class Problem:
    kind: str
    message: str
    hint: str
    warning: bool = False
    check_id: str = ""  # set by a type that keeps an older, key-specific id


def where(root, path):
    """``AUTHSERVICE["session"]["expires_in"]`` for ``("session", "expires_in")``."""
    return root + "".join(f"[{part!r}]" for part in path)


class Type:
    kind = "type"
    label = "any value"
    check_id = ""  # overrides the app's id for this type's own kind (keeps pre-existing ids)
    emits = ()  # the kinds of problem it can report besides "type" (for the settings reference)

    def children(self):
        return ()

    def problems(self, value, name):
        """Problems of ``value``; ``name`` is where it is, as the user wrote it."""
        return []

    def problem(self, name, message, hint, kind=None, warning=False):
        kind = kind or self.kind
        return Problem(kind, f"{name} {message}", hint, warning, self.check_id if kind == self.kind else "")

    def wrong_type(self, value, name, hint=""):
        return self.problem(name, f"must be {self.label}, not {type(value).__name__} {short(value)}",
                            hint or f"Give {self.label}.", kind="type")


Any = Type


class Bool(Type):
    label = "True or False"

    def problems(self, value, name):
        return [] if isinstance(value, bool) else [self.wrong_type(value, name, "Write True or False, "
                                                                  "without quotes.")]


class Str(Type):
    label = "a string"

    def problems(self, value, name):
        return [] if isinstance(value, str) else [self.wrong_type(value, name)]


class Int(Type):
    """A whole number (``number=True``: a float too), > 0 or (``positive=False``) ≥ 0."""

    kind = "range"
    emits = ("range",)

    def __init__(self, positive=True, number=False):
        self.positive = positive
        self.number = number
        noun = "number" if number else "integer"
        self.label = f"a positive {noun}" if positive else f"{'a' if number else 'an'} {noun} ≥ 0"

    def problems(self, value, name):
        kinds = (int, float) if self.number else (int,)
        if isinstance(value, bool) or not isinstance(value, kinds):
            return [self.wrong_type(value, name)]
        if value > 0 or (not self.positive and value == 0):
            return []
        return [self.problem(name, f"must be {self.label}, not {value!r}",
                             "Durations are in seconds (milliseconds where the key says so)."
                             if self.positive else "Use 0 or more.")]


class Choice(Type):
    kind = "choice"
    emits = ("choice",)

    def __init__(self, *values, check_id=""):
        self.values = values
        self.check_id = check_id
        self.label = "one of " + ", ".join(repr(value) for value in values)

    def problems(self, value, name):
        if any(value == choice and type(value) is type(choice) for choice in self.values):
            return []
        return [self.problem(name, f"must be {self.label}, not {short(value)}", f"Use {self.label}.")]


class Optional(Type):
    def __init__(self, inner):
        self.inner = inner
        self.label = f"{inner.label}, or None"

    def children(self):
        return (self.inner,)

    def problems(self, value, name):
        return [] if value is None else self.inner.problems(value, name)


class ListOf(Type):
    def __init__(self, item=None, comma_separated=False):
        self.item = item or Any()
        self.comma_separated = comma_separated  # the code also splits a string on commas
        self.label = "a list" if type(self.item) is Type else f"a list, each {self.item.label}"

    def children(self):
        return (self.item,)

    def problems(self, value, name):
        if self.comma_separated and isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, (list, tuple)):
            hint = (f"Write [{value!r}]: a string is not a list of one item."
                    if isinstance(value, str) else f"Give {self.label}.")
            return [self.wrong_type(value, name, hint)]
        found = []
        for index, item in enumerate(value):
            found += self.item.problems(item, f"{name}[{index}]")
        return found


class DictOf(Type):
    """A dict whose keys the user chooses (ids, paths)."""

    def __init__(self, value=None, key=None):
        self.value = value or Any()
        self.key = key or Str()
        self.label = "a dict" if type(self.value) is Type else f"a dict, each value {self.value.label}"

    def children(self):
        return (self.key, self.value)

    def problems(self, value, name):
        if not isinstance(value, dict):
            return [self.wrong_type(value, name)]
        found = []
        for key, item in value.items():
            found += self.key.problems(key, f"{name} key {key!r}")
            found += self.value.problems(item, f"{name}[{key!r}]")
        return found


class URL(Type):
    """An absolute http(s) URL (``relative=True``: or a path on this site, ``/error``)."""

    kind = "url"
    emits = ("url",)

    def __init__(self, relative=False):
        self.relative = relative
        self.label = "an absolute http(s) URL" + (" or a path starting with '/'" if relative else "")

    def problems(self, value, name):
        from authservice import origins  # noqa: PLC0415 - origins reads app_settings

        if not isinstance(value, str):
            return [self.wrong_type(value, name)]
        if origins.is_http_url(value) or self.relative and origins.is_safe_relative(value):
            return []
        return [self.problem(name, f"must be {self.label}, not {value!r}",
                             "Write scheme and host, e.g. https://auth.example.com.")]


class DottedPath(Type):
    """A dotted path imported at check time, naming a callable (``of_class``: a class). Unless
    ``path_only``, the callable itself may be given instead of its path."""

    kind = "import"
    emits = ("import",)

    def __init__(self, label="a dotted path to a callable", of_class=False, path_only=False):
        self.label = label
        self.of_class = of_class
        self.path_only = path_only

    def problems(self, value, name):
        if callable(value) and not self.path_only:
            return []
        if not isinstance(value, str):
            return [self.wrong_type(value, name)]
        try:
            found = import_string(value)
        except Exception as error:  # noqa: BLE001 - ImportError, or whatever the module raises on import
            return [self.problem(name, f"cannot be imported: {value!r} ({type(error).__name__}: {error})",
                                 "Write 'package.module.Name' for an object on the Python path.")]
        if not (isinstance(found, type) if self.of_class else callable(found)):
            return [self.problem(name, f"names {value!r}, which is not a {'class' if self.of_class else 'callable'}",
                                 f"Point it at {self.label.removeprefix('a dotted path to ')}.")]
        return []


class CookieName(Type):
    kind = "cookie_name"
    label = "a cookie name"
    emits = ("cookie_name",)

    def problems(self, value, name):
        if not isinstance(value, str):
            return [self.wrong_type(value, name)]
        if _COOKIE_NAME.match(value):
            return []
        return [self.problem(name, f"is not a valid cookie name: {value!r}",
                             "Use letters, digits and - . _ ! # $ % & ' * + ^ ` | ~ only (no spaces, "
                             "quotes, commas, semicolons or '=').")]


class Section(Type):
    """A dict default with keys of its own, merged key by key; walked by :func:`validate`."""

    label = "a dict of settings"


def type_of(default, declared):
    """The declared type, else the one the default implies."""
    if declared is not None:
        return declared
    if isinstance(default, bool):
        return Bool()
    if isinstance(default, int):
        return Int()
    if isinstance(default, float):
        return Int(number=True)
    if isinstance(default, str):
        return Str()
    if isinstance(default, list):
        return ListOf()
    return Any()


def resolve(defaults, types, raw_dicts=(), prefix=""):
    """``{"session.expires_in": Type, ...}`` for every key, sections included (as :class:`Section`)."""
    found = {}
    for key, default in defaults.items():
        path = prefix + key
        if isinstance(default, dict) and key not in raw_dicts and path not in types:
            found[path] = Section()
            found.update(resolve(default, types, raw_dicts, path + "."))
        elif isinstance(default, dict) and path not in types:
            found[path] = DictOf()
        else:
            found[path] = type_of(default, types.get(path))
    return found


def validate(root, values, resolved, prefix=""):
    """Problems of the user's ``values`` (only the keys they set; unknown keys are E001's)."""
    if not isinstance(values, dict):
        return [Section().wrong_type(values, where(root, _parts(prefix)))]
    found = []
    for key, value in values.items():
        path = f"{prefix}{key}"
        declared = resolved.get(path) if isinstance(key, str) else None
        if declared is None:
            continue
        name = where(root, _parts(path))
        if isinstance(declared, Section):
            found += validate(root, value, resolved, path + ".")
            continue
        try:
            found += declared.problems(value, name)
        except Exception as error:  # noqa: BLE001 - a check must never crash on an odd value
            found.append(Problem("check_failed", f"{name} could not be checked: {type(error).__name__}: "
                                 f"{error}", "Give a value of the documented type."))
    return found


def _parts(path):
    return tuple(path.strip(".").split(".")) if path.strip(".") else ()


def short(value):
    """``repr(value)``, cut to fit in one message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_ids(declared, ids):
    """The ids of every check that may report on a value of type ``declared``."""
    found = {ids.get("type")}
    for kind in declared.emits:
        found.add(declared.check_id if kind == declared.kind and declared.check_id else ids.get(kind))
    for child in declared.children():
        found |= check_ids(child, ids)
    return found - {None}


def check_messages(problems, ids):
    """Django check messages for ``problems``, ids from ``ids`` (kind → id) unless a type kept its own."""
    from django.core.checks import Error, Warning  # noqa: PLC0415

    return [(Warning if problem.warning else Error)(problem.message, hint=problem.hint,
                                                     id=problem.check_id or ids[problem.kind])
            for problem in problems]


def check_settings(settings_object, types, ids):
    """Validate the project's ``settings.<name>`` against ``types``; see :func:`validate`."""
    values = settings_object.user_values()
    resolved = resolve(settings_object.defaults, types, settings_object.raw_dicts)
    return check_messages(validate(settings_object.setting_name, values, resolved), ids)
