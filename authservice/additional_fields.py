"""better-auth's ``user.additionalFields``: extra user fields declared in ``AUTHSERVICE["user"]["additional_fields"]``.

Each key is the field's better-auth (camelCase) name on the wire; its declaration says what it holds
(``type``), whether sign-up must carry it (``required``), what a new user gets without it
(``default_value``), whether clients may set it (``input``) and whether answers show it
(``returned``). Values live in the user model's field ``field_name`` (default: the key in
snake_case) when the model has one, else in the JSON column ``AuthProfile.data`` under that name, so
``authservice.User`` and ``auth.User`` carry extra fields without a custom model.

The rules are better-auth's ``parseInputData``: a client-given value of an ``input: False`` field is
refused (400 ``FIELD_NOT_ALLOWED``) unless it is falsy, or, at sign-up, replaced by the default; a
``required`` field missing at sign-up without a default is 400 ``MISSING_FIELD``. Unlike
better-auth, values are type-checked (400 ``VALIDATION_ERROR``), as every other input is [D11].
"""

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations
from django.dispatch import receiver
from rest_framework import serializers

from authservice import app_settings, wire
from authservice.api import inputs
from authservice.errors import APIError, codes

TYPES = ("string", "number", "boolean", "date", "string[]", "number[]")
# Each type's JSON Schema, for the API document.
SCHEMAS = {
    "string": {"type": "string"}, "number": {"type": "number"}, "boolean": {"type": "boolean"},
    "date": {"type": "string", "format": "date-time"}, "string[]": {"type": "array", "items": {"type": "string"}},
    "number[]": {"type": "array", "items": {"type": "number"}},
}
OPTIONS = ("type", "required", "default_value", "input", "returned", "field_name")
# Keys of better-auth's own user record and of the sign-up body: a field may not shadow them.
RESERVED_KEYS = frozenset({"id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt",
                           "password", "callbackURL", "rememberMe"})
NO_DEFAULT = object()


def snake_case(key):
    """``favoriteColor`` -> ``favorite_color``, ``userID`` -> ``user_id``."""
    key = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", key)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower()


@dataclass(frozen=True)
class Field:
    key: str  # the wire name
    type: str
    required: bool
    default_value: Any  # NO_DEFAULT when none is declared; a callable is called per new user
    input: bool
    returned: bool
    field_name: str
    in_model: bool  # stored in the user model's field, else in AuthProfile.data
    privileged: bool  # field_name is a model field authservice or Django's auth manages (refused)

    @property
    def has_default(self):
        return self.default_value is not NO_DEFAULT

    def default(self):
        value = self.default_value
        return value() if callable(value) else value


def _model_has(model, name):
    from authservice.users import has_concrete_field  # users imports this module

    return has_concrete_field(model, name)


# Model fields authservice or Django's auth manages: an ``input`` field stored in one would let users set
# it on themselves (``is_staff``, ``password``, the e-mail), so no declaration may name one (E014, and
# refused at runtime too, for a server started without system checks).
MANAGED = ("password", "last_login", "is_superuser", "is_staff", "is_active", "groups", "user_permissions",
           "name", "first_name", "last_name", "email_verified", "image", "created_at", "updated_at",
           "date_joined", "auth_profile")


def managed_fields(model):
    """The names of ``model``'s fields no additional field may be stored in."""
    return {*MANAGED, model.USERNAME_FIELD, model.get_email_field_name(), model._meta.pk.name, "pk", "id"}


def declarations():
    """Every declared field as the settings say, the refused (``privileged``) ones included: what the
    system check reports on. Everything else reads :func:`declared`."""
    model = get_user_model()
    managed = managed_fields(model)
    found = []
    for key, options in (app_settings.user.additional_fields or {}).items():
        name = options.get("field_name") or snake_case(key)
        found.append(Field(key=key, type=options["type"], required=bool(options.get("required", False)),
                           default_value=options.get("default_value", NO_DEFAULT),
                           input=options.get("input", True) is not False,
                           returned=options.get("returned", True) is not False,
                           field_name=name, in_model=_model_has(model, name), privileged=name in managed))
    return tuple(found)


_declared = None


def declared():
    """The declared fields, in declaration order (``()`` when none: every caller's fast path).

    Raises ImproperlyConfigured while one is stored in a managed model field (authservice.E014).
    """
    global _declared
    if _declared is None:
        found = declarations()
        refused = [field.key for field in found if field.privileged]
        if refused:
            raise ImproperlyConfigured(
                f"AUTHSERVICE['user']['additional_fields'] {refused} would be stored in user-model fields "
                "that authservice or Django's auth manages (authservice.E014): give them another field_name.")
        _declared = found
    return _declared


@receiver(setting_changed)
def _forget(setting, **kwargs):
    global _declared
    if setting in ("AUTHSERVICE", "AUTH_USER_MODEL"):
        _declared = None


def any_in_profile():
    return any(not field.in_model for field in declared())


# --- input ------------------------------------------------------------------------------------------
class NotAllowed(serializers.JSONField):
    """An ``input: False`` field: any value passes validation, so the flow can answer as better-auth."""

    undocumented = True  # clients may not set it: the API document leaves it out

    def __init__(self):
        super().__init__(required=False, allow_null=True)


def _input_field(field):
    if not field.input:
        return NotAllowed()
    options = {"required": False, "allow_null": not field.required,
               "help_text": f"Additional user field ({field.type})"}
    if field.in_model:
        options.update(column_bounds(get_user_model()._meta.get_field(field.field_name), field.type))
    kinds = {"string": inputs.String, "number": inputs.Number, "boolean": inputs.Boolean,
             "date": inputs.DateTime, "string[]": inputs.StringList, "number[]": inputs.NumberList}
    return kinds[field.type](**options)


def column_bounds(column, kind):
    """The input options that keep a ``kind`` value within model field ``column``: past them the save
    is a database error (a 500, and on PostgreSQL an existence oracle beside the made-up user) or a
    silent cut, so it is refused as every other bounded input is, before any work is done (I4, I6)."""
    if kind == "string" and isinstance(column, models.CharField) and column.max_length:
        return {"max_length": column.max_length}
    if kind != "number":
        return {}
    if isinstance(column, models.IntegerField):
        # Django's documented range of the field's type, the same on every database (SQLite's is wider).
        internal = column.get_internal_type()
        low, high = BaseDatabaseOperations.integer_field_ranges.get(internal, (None, None))
        return {"integer": True, "minimum": low, "maximum": high}
    if isinstance(column, models.DecimalField) and column.max_digits is not None:
        places = column.decimal_places or 0
        largest = float(Decimal(10) ** (column.max_digits - places) - Decimal(1).scaleb(-places))
        return {"minimum": -largest, "maximum": largest}
    return {}


def input_fields():
    """DRF fields validating the declared fields' types, for the sign-up and update-user bodies."""
    return {field.key: _input_field(field) for field in declared()}


def parse_input(body, action):
    """The declared fields' values from a validated ``body`` (``action``: "create" or "update")."""
    parsed = {}
    for field in declared():
        if field.key in body:
            if not field.input:
                if field.has_default and action == "create":
                    parsed[field.key] = field.default()
                elif inputs.js_truthy(body[field.key]):
                    raise APIError(400, codes.FIELD_NOT_ALLOWED, f"{field.key} is not allowed to be set")
                continue
            parsed[field.key] = body[field.key]
        elif field.has_default and action == "create":
            parsed[field.key] = field.default()
        elif field.required and action == "create":
            raise APIError(400, codes.MISSING_FIELD, f"{field.key} is required")
    return parsed


def with_defaults(values):
    """``values`` plus the default of every declared field missing from it (a new user's fields)."""
    values = dict(values)
    for field in declared():
        if field.key not in values and field.has_default:
            values[field.key] = field.default()
    return values


# --- storage ----------------------------------------------------------------------------------------
def _to_json(value):
    return wire.iso(value) if isinstance(value, datetime) else value


def split(values):
    """``values`` (wire keys) as (model attributes, profile data), both by ``field_name``."""
    by_key = {field.key: field for field in declared()}
    model_values, profile_values = {}, {}
    for key, value in values.items():
        field = by_key[key]
        if field.in_model:
            model_values[field.field_name] = value
        else:
            profile_values[field.field_name] = _to_json(value)
    return model_values, profile_values


# --- output -----------------------------------------------------------------------------------------
def to_wire_value(value):
    if isinstance(value, datetime):
        return wire.iso(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _absent(field):
    """What a stored record without the value answers: the declared default, as a column default would."""
    return field.default_value if field.has_default and not callable(field.default_value) else None


def wire_values(user, profile_data):
    """The returned fields of ``user``; ``profile_data`` is a callable giving its AuthProfile.data."""
    found = {}
    data = None
    for field in declared():
        if not field.returned:
            continue
        if field.in_model:
            value = getattr(user, field.field_name)
        else:
            data = profile_data() if data is None else data
            value = data.get(field.field_name, _absent(field))
        found[field.key] = to_wire_value(value)
    return found


def schema_properties():
    """The User schema's properties of the returned fields (null: a user may have none)."""
    return {field.key: {**SCHEMAS[field.type], "type": [SCHEMAS[field.type]["type"], "null"],
                        "description": "Additional user field"}
            for field in declared() if field.returned}
