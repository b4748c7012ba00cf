"""Input validation: DRF serializers with strict, zod-like fields.

better-auth validates with zod and clients may show its messages, so a failure reads
``[body.email] Invalid email address`` (core.md §1.3). DRF's own fields coerce (``"false"`` becomes
False, ``1`` becomes ``"1"``); these fields never do, because better-auth does not either.
"""

import functools
import math
import re
from datetime import timezone as dt_timezone

from django.utils.dateparse import parse_datetime
from rest_framework import serializers
from rest_framework.fields import empty

from authservice import origins

# zod 4's default e-mail pattern (core.md §1.3).
EMAIL_RE = re.compile(
    r"^(?:[A-Za-z0-9_'+\-]+\.)*[A-Za-z0-9_'+\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$"
)
# RFC 5321's limit; also keeps the unique index of the e-mail column within what PostgreSQL indexes.
EMAIL_MAX_LENGTH = 254


def js_type(value):
    """The type name zod reports for a received value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity"  # as zod 4 names them
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def js_truthy(value):
    """JavaScript's truthiness, which better-auth applies to some keys: ``[]`` and ``{}`` are true."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0
    return True


def is_email(value):
    return isinstance(value, str) and len(value) <= EMAIL_MAX_LENGTH and bool(EMAIL_RE.match(value))


def _no_nul(value):
    # PostgreSQL cannot store NUL in text columns; refusing it here keeps it a 400, not a 500.
    return "\x00" not in value


class _Strict(serializers.Field):
    expected = "unknown"

    def __init__(self, **kwargs):
        kwargs.setdefault("required", True)
        super().__init__(**kwargs)
        self.error_messages["required"] = f"Invalid input: expected {self.expected}, received undefined"
        self.error_messages["null"] = f"Invalid input: expected {self.expected}, received null"

    def wrong_type(self, data):
        raise serializers.ValidationError(
            f"Invalid input: expected {self.expected}, received {js_type(data)}"
        )

    def to_representation(self, value):
        return value


class String(_Strict):
    expected = "string"

    def __init__(self, *, min_length=0, max_length=None, email=False, **kwargs):
        self.min_length = min_length
        self.max_length = max_length
        self.email = email
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.wrong_type(data)
        if not _no_nul(data):
            raise serializers.ValidationError("Invalid input: string contains a NUL character")
        if len(data) < self.min_length:
            raise serializers.ValidationError(
                f"Too small: expected string to have >={self.min_length} characters"
            )
        if self.max_length is not None and len(data) > self.max_length:
            raise serializers.ValidationError(
                f"Too big: expected string to have <={self.max_length} characters"
            )
        if self.email and not is_email(data):
            raise serializers.ValidationError("Invalid email address")
        return data


class ImageURL(String):
    """A user's ``image``: an absolute http(s) URL (:func:`origins.is_http_url`), or ``""``/null for
    none. better-auth takes any string; we refuse ``javascript:``, ``data:`` and the like, because every
    client renders this value as a link or an image source (I4)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        if data == "":
            return None
        if not origins.is_http_url(data):
            raise serializers.ValidationError("Invalid URL: expected an http(s) URL")
        return data


class Boolean(_Strict):
    expected = "boolean"

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.wrong_type(data)
        return data


def _is_number(value):
    """A JSON number: not a bool, and not infinity or NaN, which in-process callers can pass (the HTTP
    body parser refuses them) and which no column or JSON answer can hold."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not isinstance(value, float) or math.isfinite(value)


class Number(_Strict):
    """A finite number; ``integer``, ``minimum`` and ``maximum`` (inclusive) bound it as zod's
    ``int()``/``gte``/``lte`` do (an additional field stored in an integer or decimal column)."""

    expected = "number"

    def __init__(self, *, integer=False, minimum=None, maximum=None, **kwargs):
        self.integer = integer
        self.minimum = minimum
        self.maximum = maximum
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not _is_number(data):
            self.wrong_type(data)
        if self.integer and not (isinstance(data, int) or data.is_integer()):
            raise serializers.ValidationError("Invalid input: expected int, received number")
        if self.minimum is not None and data < self.minimum:
            raise serializers.ValidationError(f"Too small: expected number to be >={self.minimum}")
        if self.maximum is not None and data > self.maximum:
            raise serializers.ValidationError(f"Too big: expected number to be <={self.maximum}")
        return data


class DateTime(_Strict):
    """A date as JSON carries one (what ``JSON.stringify(new Date())`` gives): an ISO 8601 string.
    A time without a zone is UTC; the value is an aware datetime in UTC. One whose UTC instant falls
    outside datetime's years 1-9999 (``9999-12-31T23:59:59-01:00``) is refused here, because storing
    and answering it (both in UTC) would raise."""

    expected = "date"

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.wrong_type(data)
        try:
            value = parse_datetime(data.strip())
            if value is not None:
                value = value.astimezone(dt_timezone.utc) if value.tzinfo else value.replace(tzinfo=dt_timezone.utc)
        except (ValueError, OverflowError):
            value = None
        if value is None:
            raise serializers.ValidationError("Invalid input: expected date, received Invalid Date")
        return value


class Flag(_Strict):
    """A query flag: true for any non-empty value, ``"false"`` included (core.md §1.2)."""

    expected = "string"

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, list):
            data = data[-1] if data else ""
        return bool(data)


class StringList(_Strict):
    expected = "array"

    def to_internal_value(self, data):
        if not isinstance(data, list):
            self.wrong_type(data)
        for index, item in enumerate(data):
            if not isinstance(item, str) or not _no_nul(item):
                raise serializers.ValidationError(
                    {str(index): f"Invalid input: expected string, received {js_type(item)}"}
                )
        return data


class NumberList(_Strict):
    expected = "array"

    def to_internal_value(self, data):
        if not isinstance(data, list):
            self.wrong_type(data)
        for index, item in enumerate(data):
            if not _is_number(item):
                raise serializers.ValidationError(
                    {str(index): f"Invalid input: expected number, received {js_type(item)}"}
                )
        return data


class Record(_Strict):
    """A free-form JSON object (``additionalData``), or ``{str: str}`` with ``values="string"``."""

    expected = "record"

    def __init__(self, *, values=None, **kwargs):
        self.values = values
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            self.wrong_type(data)
        if _contains_nul(data):
            raise serializers.ValidationError("Invalid input: string contains a NUL character")
        if self.values == "string":
            for key, item in data.items():
                if not isinstance(item, str) or not _no_nul(item):
                    raise serializers.ValidationError(
                        {key: f"Invalid input: expected string, received {js_type(item)}"}
                    )
        return data


def _contains_nul(value):
    """Any NUL in a nested JSON value, keys included (jsonb refuses them); no recursion."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


class Input(serializers.Serializer):
    """Base of every endpoint's body or query schema. Unknown keys are ignored, as zod does."""


class Object(Input):
    """A nested object. ``strict``: unknown keys are errors; ``keep_unknown``: kept as sent."""

    strict = False
    keep_unknown = False

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("required", True)
        super().__init__(*args, **kwargs)
        self.error_messages["required"] = "Invalid input: expected object, received undefined"
        self.error_messages["null"] = "Invalid input: expected object, received null"

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError(f"Invalid input: expected object, received {js_type(data)}")
        if self.strict:
            unknown = [key for key in data if key not in self.fields]
            if unknown:
                names = ", ".join(f'"{key}"' for key in unknown)
                label = "key" if len(unknown) == 1 else "keys"
                raise serializers.ValidationError(f"Unrecognized {label}: {names}")
        validated = dict(super().to_internal_value(data))
        if self.keep_unknown:
            for key, value in data.items():
                validated.setdefault(key, value)
        return validated


def _flatten(errors, prefix):
    if isinstance(errors, dict):
        for key, value in errors.items():
            path = prefix if key in ("non_field_errors",) else f"{prefix}.{key}"
            yield from _flatten(value, path)
    elif isinstance(errors, list):
        for item in errors:
            yield from _flatten(item, prefix)
    else:
        yield f"[{prefix}] {errors}"


@functools.lru_cache(maxsize=None)
def _empty_is_valid(input_class):
    """True when ``{}`` validates to ``{}``: decided once per class, not per request."""
    return all(not field.required and field.default is empty for field in input_class().fields.values())


def validate(input_class, data, where):
    """Validated data as a dict, or ``(None, message)`` in zod's format."""
    if not isinstance(data, dict):
        received = "undefined" if data is None else js_type(data)
        expected = getattr(input_class, "expected_top", "object")
        return None, f"[{where}] Invalid input: expected {expected}, received {received}"
    if not data and _empty_is_valid(input_class):
        # Most requests send no query and many no body: skip building a serializer for them.
        return {}, None
    serializer = input_class(data=data)
    if serializer.is_valid():
        return dict(serializer.validated_data), None
    return None, "; ".join(_flatten(serializer.errors, where))
