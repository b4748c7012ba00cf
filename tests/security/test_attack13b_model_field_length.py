"""Attack 13b: a ``string`` additional field stored in a model ``CharField`` takes any length.

``inputs.String`` for an additional field has no ``max_length``, so a 5000-character
``favoriteColor`` is accepted for ``EmailUser.favorite_color = CharField(max_length=40)``. SQLite stores
it (the model's limit silently broken); PostgreSQL refuses the INSERT/UPDATE with a DataError: a 500
on sign-up and update-user (I4). With verification required, the made-up user of a taken address
answers 200 while a free address is a 500: an existence oracle on PostgreSQL (I7).

Fix at the mechanism: ``additional_fields._input_field`` takes ``max_length`` from the model field
that will hold the value (``field.in_model``), as every other bounded input is refused past its bound
before any work is done (I6).
"""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist

from tests.conftest import PASSWORD, ApiClient
from tests.subprocess_pytest import run_pytest


def _has_favorite_color():
    try:
        get_user_model()._meta.get_field("favorite_color")
    except FieldDoesNotExist:
        return False
    return True


needs_field = pytest.mark.skipif(not _has_favorite_color(), reason="run with --ds=tests.settings_email_user")
COLOR = {"favoriteColor": {"type": "string"}}


@needs_field
@pytest.mark.django_db
def test_a_value_longer_than_the_column_is_refused_at_sign_up(configure):
    configure(user={"additional_fields": COLOR})
    response = ApiClient().api_post("/sign-up/email", {"name": "A", "email": "a@example.com", "password": PASSWORD,
                                                       "favoriteColor": "x" * 5000})
    assert response.status_code == 400, response.content


@needs_field
@pytest.mark.django_db
def test_a_value_longer_than_the_column_is_refused_by_update_user(configure, signed_in):
    configure(user={"additional_fields": COLOR})
    response = signed_in.api_post("/update-user", {"favoriteColor": "x" * 41})
    assert response.status_code == 400, response.content
    assert len(get_user_model().objects.get(pk=signed_in.user.pk).favorite_color) <= 40


def test_under_the_email_user_model():
    if _has_favorite_color():
        pytest.skip("this run is that one")
    result = run_pytest("tests.settings_email_user", "tests/security/test_attack13b_model_field_length.py",
                        "-k", "longer_than_the_column")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
