"""POST /update-user (core.md §4.14, D11)."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model

from authservice import auth, users
from authservice.errors import APIError
from tests.conftest import error_of, set_updated_at


def cookie_header(client):
    return "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())


def reload(user):
    return get_user_model().objects.get(pk=user.pk)


def test_updates_the_name(signed_in):
    response = signed_in.api_post("/update-user", {"name": "Ada Lovelace"})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    assert users.name_of(reload(signed_in.user)) == "Ada Lovelace"


def test_the_name_may_become_empty(signed_in):
    signed_in.api_post("/update-user", {"name": ""})
    assert users.name_of(reload(signed_in.user)) == ""


def test_sets_the_image(signed_in):
    signed_in.api_post("/update-user", {"image": "https://img.example.com/ada.png"})
    assert users.image_of(reload(signed_in.user)) == "https://img.example.com/ada.png"


def test_null_clears_the_image(signed_in):
    users.update(signed_in.user, image="https://img.example.com/a.png")
    response = signed_in.api_post("/update-user", {"image": None})
    assert response.json() == {"status": True}
    assert users.image_of(reload(signed_in.user)) is None


def test_the_update_shows_in_get_session(signed_in):
    signed_in.api_post("/update-user", {"name": "Countess", "image": "https://img.example.com/a.png"})
    user = signed_in.api_get("/get-session").json()["user"]
    assert (user["name"], user["image"]) == ("Countess", "https://img.example.com/a.png")


def test_updated_at_moves(signed_in):
    past = users.updated_at_of(reload(signed_in.user)) - timedelta(days=1)
    set_updated_at(signed_in.user, past)
    signed_in.api_post("/update-user", {"name": "Ada L."})
    assert users.updated_at_of(reload(signed_in.user)) > past


def test_resends_the_session_cookie_with_the_same_token(signed_in):
    response = signed_in.api_post("/update-user", {"name": "Ada L."})
    cookie = response.cookies["auth.session_token"]
    assert cookie.value.startswith(signed_in.token + ".")
    assert cookie["max-age"] == 604800


def test_a_dont_remember_session_gets_a_browser_session_cookie(api, user):
    api.api_post("/sign-in/email", {"email": user.email, "password": "correct horse battery",
                                    "rememberMe": False})
    response = api.api_post("/update-user", {"name": "Ada L."})
    assert response.cookies["auth.session_token"]["max-age"] == ""
    assert "auth.dont_remember" in response.cookies


def test_email_verified_is_ignored(signed_in):
    response = signed_in.api_post("/update-user", {"name": "Ada", "emailVerified": True})
    assert response.status_code == 200
    assert users.is_email_verified(reload(signed_in.user)) is False


def test_unknown_keys_are_ignored(signed_in):
    response = signed_in.api_post("/update-user", {"name": "Ada", "isStaff": True, "id": "x"})
    assert response.status_code == 200
    user = reload(signed_in.user)
    assert getattr(user, "is_staff", False) is False
    assert user.pk == signed_in.user.pk


# --- errors --------------------------------------------------------------------------------------
def test_without_a_session_is_unauthorized(api, user):
    response = api.api_post("/update-user", {"name": "Mallory"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHORIZED"
    assert users.name_of(reload(user)) == "Ada"


def test_any_non_empty_email_can_not_be_updated(signed_in):
    response = signed_in.api_post("/update-user", {"name": "Ada", "email": "ada@example.com"})
    assert response.status_code == 400
    assert error_of(response) == {"message": "Email can not be updated",
                                  "code": "EMAIL_CAN_NOT_BE_UPDATED", "status": 400}
    assert users.name_of(reload(signed_in.user)) == "Ada"


@pytest.mark.parametrize("value", [True, 1, [], {}, "x"])
def test_any_truthy_email_value_can_not_be_updated(signed_in, value):
    response = signed_in.api_post("/update-user", {"name": "Ada", "email": value})
    assert error_of(response)["code"] == "EMAIL_CAN_NOT_BE_UPDATED"


@pytest.mark.parametrize("value", ["", None, False, 0])
def test_an_empty_email_key_is_ignored(signed_in, value):
    response = signed_in.api_post("/update-user", {"name": "Ada B.", "email": value})
    assert response.status_code == 200
    assert users.name_of(reload(signed_in.user)) == "Ada B."


def test_an_empty_body_has_no_fields_to_update(signed_in):
    response = signed_in.api_post("/update-user", {})
    assert response.status_code == 400
    assert error_of(response) == {"message": "No fields to update", "code": "NO_FIELDS_TO_UPDATE",
                                  "status": 400}


def test_only_ignored_keys_leave_no_fields_to_update(signed_in):
    response = signed_in.api_post("/update-user", {"emailVerified": True, "foo": 1, "email": ""})
    assert error_of(response)["code"] == "NO_FIELDS_TO_UPDATE"


def test_an_array_body_is_not_a_record(signed_in):
    response = signed_in.api_post("/update-user", [{"name": "x"}])
    assert response.status_code == 400
    assert error_of(response) == {"message": "[body] Invalid input: expected record, received array",
                                  "code": "VALIDATION_ERROR", "status": 400}


def test_a_missing_body_is_not_a_record(signed_in):
    response = signed_in.api_post("/update-user")
    assert error_of(response)["message"] == "[body] Invalid input: expected record, received undefined"


def test_a_string_body_is_not_a_record(signed_in):
    response = signed_in.api_post("/update-user", "Ada")
    assert error_of(response)["message"] == "[body] Invalid input: expected record, received string"


def test_a_non_string_name_is_a_validation_error(signed_in):
    response = signed_in.api_post("/update-user", {"name": 42})
    assert response.status_code == 400
    assert error_of(response) == {"message": "[body.name] Invalid input: expected string, received number",
                                  "code": "VALIDATION_ERROR", "status": 400}
    assert users.name_of(reload(signed_in.user)) == "Ada"


def test_a_null_name_is_a_validation_error(signed_in):
    response = signed_in.api_post("/update-user", {"name": None})
    assert error_of(response)["message"] == "[body.name] Invalid input: expected string, received null"


def test_a_non_string_image_is_a_validation_error(signed_in):
    response = signed_in.api_post("/update-user", {"image": {"url": "x"}})
    assert error_of(response)["message"] == "[body.image] Invalid input: expected string, received object"


def test_validation_comes_before_the_session_check(api, user):
    response = api.api_post("/update-user", [])
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"


# --- in-process ----------------------------------------------------------------------------------
def test_in_process_update_returns_status_and_the_cookie(signed_in):
    result = auth.api.update_user(body={"name": "In Process"}, headers={"cookie": cookie_header(signed_in)},
                                  return_headers=True)
    assert result["response"] == {"status": True}
    assert any(line.startswith("auth.session_token=" + signed_in.token)
               for line in result["headers"].get_list("set-cookie"))
    assert users.name_of(reload(signed_in.user)) == "In Process"


def test_in_process_nothing_to_update_raises(signed_in):
    with pytest.raises(APIError) as caught:
        auth.api.update_user(body={}, headers={"cookie": cookie_header(signed_in)})
    assert (caught.value.code, caught.value.status) == ("NO_FIELDS_TO_UPDATE", "BAD_REQUEST")
