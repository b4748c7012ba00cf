"""I7: without a session, sign-up answers a taken address with a made-up user. Its id must look like a
real new user's id for the user model's key: a 32-character random id beside integer ids
(``auth.User``) told that the account existed. Runs under the default model and, in a subprocess,
under ``tests.settings_auth_user``.
"""

import os

import pytest
from django.contrib.auth import get_user_model

from tests.conftest import PASSWORD
from tests.subprocess_pytest import run_pytest

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def without_session(configure):
    configure(email_and_password={"auto_sign_in": False})


def sign_up_id(api, email):
    response = api.api_post("/sign-up/email", {"name": "Ada", "email": email, "password": PASSWORD})
    assert response.status_code == 200, response.content
    assert response.json()["token"] is None
    return response.json()["user"]["id"]


def shape(user_id):
    return ("integer", None) if user_id.isdigit() else ("string", len(user_id))


def test_a_taken_address_gets_an_id_of_the_same_shape_as_a_new_one(api, make_user):
    make_user(email="taken@example.com")
    assert shape(sign_up_id(api, "taken@example.com")) == shape(sign_up_id(api, "new@example.com"))


def test_with_integer_keys_the_made_up_id_is_a_plausible_next_id(api, make_user):
    if get_user_model()._meta.pk.get_internal_type() not in ("AutoField", "BigAutoField", "SmallAutoField"):
        pytest.skip("the user model's key is not an integer sequence")
    taken = make_user(email="taken@example.com")
    assert int(sign_up_id(api, "taken@example.com")) > taken.pk


def test_the_id_shapes_match_under_auth_user():
    if os.environ.get("DJANGO_SETTINGS_MODULE") == "tests.settings_auth_user":
        pytest.skip("this run is that one")
    result = run_pytest("tests.settings_auth_user", __file__, "-k", "not under_auth_user")
    assert result.returncode == 0 and "2 passed" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
