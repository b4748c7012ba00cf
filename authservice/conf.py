"""A namespaced settings dict with documented defaults, read through attribute access.

Each app keeps one dict in Django settings (``AUTHSERVICE``, ``AUTHSERVICE_SSO``) and one module
(``app_settings.py``) that declares the defaults and reads them through a :class:`NamespacedSettings`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed


class Section:
    """Attribute access over one merged dict; unknown names raise instead of returning None.

    A value read once is kept as an instance attribute, so the next read of it (every request reads a
    few dozen settings) is a plain attribute lookup: ``__getattr__`` runs only on the first. That is
    safe because a Section never changes: when the setting does, :class:`NamespacedSettings` builds a
    new one.
    """

    def __init__(self, values: dict[str, Any], path: str, raw_dicts: frozenset[str]) -> None:
        self._values = values
        self._path = path
        self._raw_dicts = raw_dicts

    def __getattr__(self, name: str) -> Any:
        try:
            value = self._values[name]
        except KeyError:
            raise AttributeError(f"Unknown setting {self._path}.{name}") from None
        if isinstance(value, dict) and name not in self._raw_dicts:
            value = Section(value, f"{self._path}.{name}", self._raw_dicts)
        self.__dict__[name] = value
        return value

    def as_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._values)


class NamespacedSettings:
    """``settings.<setting_name>`` merged key by key over ``defaults``; reloaded when it changes.

    ``raw_dicts`` names dicts whose keys the user chooses (ids, paths): they are replaced whole and
    returned as plain dicts.
    """

    def __init__(self, setting_name: str, defaults: dict[str, Any],
                 raw_dicts: Iterable[str] = ()) -> None:
        self.setting_name = setting_name
        self.defaults = defaults
        self.raw_dicts = frozenset(raw_dicts)
        self._section: Section | None = None
        setting_changed.connect(self._on_change, weak=False)

    def _on_change(self, setting: str, **kwargs: Any) -> None:
        if setting in (self.setting_name, "SECRET_KEY"):
            self._section = None

    def user_values(self) -> Mapping[str, Any]:
        return getattr(settings, self.setting_name, {})

    def section(self) -> Section:
        if self._section is None:
            merged = self._merge(self.defaults, self.user_values())
            self._section = Section(merged, self.setting_name, self.raw_dicts)
        return self._section

    def _merge(self, defaults: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
        merged = copy.deepcopy(defaults)
        for key, value in overrides.items():
            if isinstance(merged.get(key), dict) and isinstance(value, dict) and key not in self.raw_dicts:
                merged[key] = self._merge(merged[key], value)
            else:
                merged[key] = value
        return merged

    def unknown_keys(self, defaults: Mapping[str, Any] | None = None,
                     overrides: Mapping[str, Any] | None = None, prefix: str = "") -> list[str]:
        """Names in the user's dict that no default declares (for the system checks)."""
        defaults = self.defaults if defaults is None else defaults
        overrides = self.user_values() if overrides is None else overrides
        found: list[str] = []
        for key, value in overrides.items():
            if key not in defaults:
                found.append(f"{prefix}{key}")
            elif isinstance(defaults[key], dict) and isinstance(value, dict) and key not in self.raw_dicts:
                found += self.unknown_keys(defaults[key], value, f"{prefix}{key}.")
        return found
