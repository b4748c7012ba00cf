"""The settings reference page (docs/reference/settings.md), generated from the code so it cannot drift.

Every key of ``AUTHSERVICE`` and ``AUTHSERVICE_SSO`` with its default (``DEFAULTS``), its type
(``TYPES`` or the default's), its description (the comment above the key in ``app_settings.py``), the
environment variable the example project reads it from (found in the settings module's source) and
the system checks that validate it. A key without a comment of its own shares the comment of the key
on the line above it (``min_password_length`` / ``max_password_length``).
"""

import ast
import inspect
import io
import re
import tokenize
from pathlib import Path

from authservice.setting_types import Section, check_ids, resolve

_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")
_SETTING_NAMES = ("AUTHSERVICE", "AUTHSERVICE_SSO")

HEADER = """# Settings reference

<!-- Generated from the code by `python manage.py authservice_settings_reference > docs/reference/settings.md`.
Do not edit by hand: a test fails when this page differs from the code. -->

Each app reads one dict from Django's settings: `AUTHSERVICE` (the core) and `AUTHSERVICE_SSO` (the SSO
plugin). Every key below has a default; nested dicts merge key by key over the defaults, so a project
sets only what it changes:

```python
AUTHSERVICE = {
    "base_url": "https://auth.example.com",
    "trusted_origins": ["https://app.example.com"],
    "session": {"expires_in": 3600 * 24 * 30},
}
```

`manage.py check` validates the values: an unknown key is `authservice.E001` / `sso.E001`; the last
column names the checks that validate each key. A value so odd that its check itself fails is reported
as `authservice.E019` / `sso.E029`. The *Environment* column names the variable the example project
(`project/settings.py`) reads the key from, where it reads one.
"""


def render(apps, settings_source=None):
    """The page; ``apps`` is ``[(app_settings module, checks module), ...]``."""
    env = _environment_variables(settings_source) if settings_source else {}
    parts = [HEADER]
    for module, checks in apps:
        namespace = module.namespace
        parts.append(f"\n## `{namespace.setting_name}`\n")
        parts.append("| Key | Default | Type | Description | Environment | Checks |")
        parts.append("| --- | --- | --- | --- | --- | --- |")
        descriptions = describe(module)
        types = resolve(namespace.defaults, module.TYPES, namespace.raw_dicts)
        combinations = getattr(checks, "COMBINATION_CHECK_IDS", {})
        for path, declared in types.items():
            if isinstance(declared, Section):
                continue
            ids = check_ids(declared, checks.SETTING_CHECK_IDS) | set(combinations.get(path, ()))
            variables = env.get((namespace.setting_name, *path.split(".")), ())
            parts.append("| " + " | ".join(_cell(text) for text in (
                f"`{path}`", f"`{_default(namespace.defaults, path)!r}`", declared.label,
                descriptions.get(path, ""), ", ".join(f"`{name}`" for name in variables),
                ", ".join(f"`{check_id}`" for check_id in sorted(ids)),
            )) + " |")
    return "\n".join(parts) + "\n"


def describe(module):
    """``{"session.expires_in": "Seconds a session lives (7 days).", ...}`` from the comments in
    ``module``'s ``DEFAULTS`` literal."""
    source = inspect.getsource(module)
    comments = {}  # line number -> comment text, for lines holding only a comment
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and not token.line[:token.start[1]].strip():
            comments[token.start[0]] = token.string.lstrip("#").strip()
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "DEFAULTS" for t in node.targets):
            _describe_dict(node.value, "", comments, found)
    return found


def _describe_dict(node, prefix, comments, found):
    if not isinstance(node, ast.Dict):
        return
    previous = None  # (key node, description) of the sibling above
    for key, value in zip(node.keys, node.values):
        if not isinstance(key, ast.Constant):
            continue
        lines = []
        line = key.lineno - 1
        while line in comments:
            lines.insert(0, comments[line])
            line -= 1
        text = " ".join(lines)
        if not text and previous and previous[0].end_lineno == key.lineno - 1 and not isinstance(
                previous[0], ast.Dict):
            text = previous[1]  # a pair of values such as min/max under one comment
        path = prefix + key.value
        if text:
            found[path] = text
        previous = (value, text)
        _describe_dict(value, path + ".", comments, found)


def _environment_variables(path):
    """``{("AUTHSERVICE", "rate_limit", "enabled"): ("AUTH_RATE_LIMIT",), ...}`` from a settings module's
    source: the names read (``env.bool("X")``, ``os.environ["X"]``, ...) in each value of the
    ``AUTHSERVICE`` / ``AUTHSERVICE_SSO`` literals, following module-level names they use."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    assigned = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = node.value
    found = {}
    for name in _SETTING_NAMES:
        if isinstance(assigned.get(name), ast.Dict):
            _variables_of_dict(assigned[name], (name,), assigned, found)
    return found


def _variables_of_dict(node, path, assigned, found):
    for key, value in zip(node.keys, node.values):
        if not isinstance(key, ast.Constant):
            continue
        if isinstance(value, ast.Dict):
            _variables_of_dict(value, (*path, key.value), assigned, found)
            continue
        names = _variables_in(value, assigned, set())
        if names:
            found[(*path, key.value)] = tuple(sorted(names))


def _variables_in(node, assigned, seen):
    names = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Call) and child.args and isinstance(child.args[0], ast.Constant):
            if isinstance(child.args[0].value, str) and _ENV_NAME.match(child.args[0].value):
                names.add(child.args[0].value)
        elif isinstance(child, ast.Subscript) and "environ" in ast.unparse(child.value):
            if isinstance(child.slice, ast.Constant) and isinstance(child.slice.value, str):
                names.add(child.slice.value)
        elif isinstance(child, ast.Name) and child.id in assigned and child.id not in seen:
            seen.add(child.id)
            names |= _variables_in(assigned[child.id], assigned, seen)
    return names


def _default(defaults, path):
    value = defaults
    for part in path.split("."):
        value = value[part]
    return value


def _cell(text):
    """One table cell: no line break, ``|`` escaped, ``<`` outside code spans kept from reading as HTML."""
    parts = str(text).replace("|", "\\|").replace("\n", " ").split("`")
    return "`".join(part if index % 2 else part.replace("<", "&lt;") for index, part in enumerate(parts))
