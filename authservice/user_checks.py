"""System checks on the project's user model: can authservice serve it (authservice.users)?

Run by ``manage.py check`` and before ``migrate``/``runserver``, so a model we cannot serve is explained
before the first request fails. Ids ``authservice.E020``-``E029`` and ``authservice.W020``-``W029``.
"""

from django.contrib.auth import get_user_model
from django.core import checks
from django.core.exceptions import FieldDoesNotExist
from django.db import models

TEXT_FIELDS = (models.CharField, models.TextField)


def _field(model, name):
    try:
        return model._meta.get_field(name)
    except FieldDoesNotExist:
        return None


def _has_unique_email(model, field):
    if field.unique:
        return True
    # A UniqueConstraint on the field alone (or on Lower(field): addresses are compared in any case).
    for constraint in model._meta.constraints:
        if isinstance(constraint, models.UniqueConstraint) and not constraint.condition:
            if tuple(constraint.fields) == (field.name,):
                return True
            expressions = getattr(constraint, "expressions", ())
            if len(expressions) == 1 and field.name in str(expressions[0]):
                return True
    return False


def _uses_default_username(model):
    from authservice.adapter import DefaultAdapter, get_adapter

    try:
        adapter = type(get_adapter())
    except Exception:  # a wrong adapter path is another check's business (authservice.checks)
        return True
    return adapter.populate_username is DefaultAdapter.populate_username


@checks.register(checks.Tags.models)
def check_user_model(app_configs=None, **kwargs):
    model = get_user_model()
    label = model._meta.label
    name = model.get_email_field_name()
    field = _field(model, name)
    if field is None:
        return [checks.Error(
            f"The user model {label} has no e-mail field {name!r}: authservice signs users in by e-mail.",
            hint=(f"Add an EmailField to {label} and name it in EMAIL_FIELD (class attribute), or set "
                  "EMAIL_FIELD to the name of the model's existing e-mail field."),
            obj=model, id="authservice.E020")]
    if not isinstance(field, TEXT_FIELDS):
        return [checks.Error(
            f"The e-mail field {label}.{name} is a {type(field).__name__}, not a text field.",
            hint="Point EMAIL_FIELD at an EmailField (or another CharField) of the model.",
            obj=model, id="authservice.E021")]
    problems = []
    # New users' usernames are their addresses (DefaultAdapter.populate_username): a unique username
    # then keeps two concurrent sign-ups with one address apart, as a unique e-mail would (auth.User).
    username_guards = False
    if model.USERNAME_FIELD != name:
        username = _field(model, model.USERNAME_FIELD)
        username_guards = isinstance(username, TEXT_FIELDS) and username.unique and _uses_default_username(model)
        if not isinstance(username, TEXT_FIELDS) and _uses_default_username(model):
            problems.append(checks.Error(
                f"{label}.USERNAME_FIELD ({model.USERNAME_FIELD!r}) is neither the e-mail field nor a text "
                "field, so authservice cannot give new users a username.",
                hint=("Override populate_username(user) in your AUTHSERVICE['adapter'] subclass of "
                      "authservice.adapter.DefaultAdapter to set it."),
                obj=model, id="authservice.E022"))
    if not (_has_unique_email(model, field) or username_guards):
        problems.append(checks.Warning(
            f"The e-mail field {label}.{name} is not unique: two users may share an address (concurrent "
            "sign-ups, existing duplicates, addresses differing only in case), and every look-up by e-mail "
            "(sign-in, password reset, verification, social and SSO linking) finds the oldest of them.",
            hint=(f"Make {name} unique (unique=True, or a UniqueConstraint on Lower('{name}')) once existing "
                  "duplicates are merged."),
            obj=model, id="authservice.W020"))
    return problems
