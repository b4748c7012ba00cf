"""authservice.E014: a declared additional user field whose user-model field cannot serve it.

A declaration names a model field (``field_name``) when the model has one; that field must hold the
declared type, and must not be one that authservice or Django's auth manages (``is_staff``,
``password``, the e-mail...): an ``input`` field named so would let users set it on themselves.
"""

from django.contrib.auth import get_user_model
from django.core.checks import Error
from django.db import models

from authservice import additional_fields

# Which model fields can hold each declared type (a JSONField holds any of them).
HOLDERS = {
    "string": (models.CharField, models.TextField),
    "number": (models.IntegerField, models.FloatField, models.DecimalField),
    "boolean": (models.BooleanField,),
    "date": (models.DateTimeField,),
    "string[]": (),
    "number[]": (),
}


def _can_hold(field, kind):
    if isinstance(field, models.JSONField):
        return True
    if kind.endswith("[]"):
        # django.contrib.postgres's ArrayField, without importing it (psycopg may be absent).
        base = getattr(field, "base_field", None)
        return type(field).__name__ == "ArrayField" and base is not None and _can_hold(base, kind[:-2])
    return isinstance(field, HOLDERS[kind])


def check_model_fields():
    model = get_user_model()
    label = model._meta.label
    problems = []
    for field in additional_fields.declarations():
        at = f"AUTHSERVICE['user']['additional_fields'][{field.key!r}]"
        if field.privileged:
            problems.append(Error(
                f"{at} is stored in {label}.{field.field_name}, which authservice or Django's auth manages.",
                hint="Give it another field_name (and a model field of that name, or none: AuthProfile.data).",
                id="authservice.E014"))
        elif field.in_model and not _can_hold(model._meta.get_field(field.field_name), field.type):
            kind = type(model._meta.get_field(field.field_name)).__name__
            problems.append(Error(
                f"{at} is a {field.type}, but {label}.{field.field_name} is a {kind}, which cannot hold one.",
                hint=f"Change the model field, the declared type, or field_name. A {field.type} fits "
                     f"{_fitting(field.type)}.", id="authservice.E014"))
    return problems


def _fitting(kind):
    names = [holder.__name__ for holder in HOLDERS[kind]]
    if kind.endswith("[]"):
        names.append(f"an ArrayField of {kind[:-2]} fields")
    return ", ".join([*names, "JSONField"])
