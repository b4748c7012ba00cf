"""AUTHSERVICE["user"]["additional_fields"]: better-auth's user.additionalFields (issue 13 §4).

Sign-up and update-user accept declared fields, answers return them, and they are stored in the user
model's field of that name or, without one, in AuthProfile.data. Runs under every user model; the
model-field tests need tests.settings_email_user (EmailUser.favorite_color) and are skipped elsewhere.
"""

from datetime import datetime, timezone

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import models
from rest_framework import serializers

from authservice import additional_fields, auth, users
from authservice.additional_field_checks import check_model_fields
from authservice.api import inputs
from authservice.checks import check_setting_values
from authservice.errors import APIError
from authservice.models import AuthProfile
from tests.conftest import PASSWORD, error_of
from tests.subprocess_pytest import run_pytest

COLOR = {"favoriteColor": {"type": "string", "required": False}}


def _model_has_favorite_color():
    try:
        get_user_model()._meta.get_field("favorite_color")
    except FieldDoesNotExist:
        return False
    return True


needs_model_field = pytest.mark.skipif(not _model_has_favorite_color(),
                                       reason="run with --ds=tests.settings_email_user")
needs_no_model_field = pytest.mark.skipif(_model_has_favorite_color(), reason="the model has the field")


@pytest.fixture
def declare(configure, db):
    def apply(fields):
        configure(user={"additional_fields": fields})
    return apply


def sign_up(api, email="ada@example.com", **fields):
    return api.api_post("/sign-up/email", {"name": "Ada", "email": email, "password": PASSWORD, **fields})


def stored_user(email="ada@example.com"):
    return users.find_by_email(email)


# --- sign-up ----------------------------------------------------------------------------------------
def test_sign_up_accepts_a_declared_field_and_returns_it(api, declare):
    declare(COLOR)
    response = sign_up(api, favoriteColor="teal")
    assert response.status_code == 200, response.content
    assert response.json()["user"]["favoriteColor"] == "teal"


def test_without_declared_fields_the_user_record_is_unchanged(api, db):
    assert set(sign_up(api).json()["user"]) == {"id", "name", "email", "emailVerified", "image", "createdAt",
                                                "updatedAt", "twoFactorEnabled"}  # the twoFactor plugin's


def test_an_undeclared_key_is_ignored_as_before(api, declare):
    declare(COLOR)
    response = sign_up(api, favoriteFood="soup")
    assert response.status_code == 200
    assert "favoriteFood" not in response.json()["user"]


def test_a_value_of_the_wrong_type_is_a_validation_error(api, declare):
    declare(COLOR)
    response = sign_up(api, favoriteColor=7)
    assert response.status_code == 400
    assert error_of(response) == {"code": "VALIDATION_ERROR", "status": 400,
                                  "message": "[body.favoriteColor] Invalid input: expected string, received number"}


@pytest.mark.parametrize(("kind", "good", "bad"), [
    ("number", 4.5, "4.5"), ("boolean", True, "true"), ("string[]", ["a"], ["a", 1]), ("number[]", [1, 2.5], [True]),
    ("date", "2024-05-01T10:00:00.000Z", "yesterday"),
])
def test_each_type_takes_its_own_values_only(api, declare, kind, good, bad):
    declare({"extra": {"type": kind}})
    assert sign_up(api, extra=bad).status_code == 400
    response = sign_up(api, extra=good)
    assert response.status_code == 200, response.content
    assert response.json()["user"]["extra"] == good


@pytest.mark.parametrize(("kind", "value"), [("number", float("inf")), ("number", float("nan")),
                                           ("number[]", [1, float("-inf")])])
def test_an_in_process_call_cannot_pass_a_number_json_cannot_carry(declare, kind, value):
    declare({"extra": {"type": kind}})
    with pytest.raises(APIError) as raised:
        auth.api.sign_up_email(body={"name": "Ada", "email": "ada@example.com", "password": PASSWORD,
                                     "extra": value})
    assert (raised.value.status_code, raised.value.code) == (400, "VALIDATION_ERROR")


def test_a_required_field_missing_at_sign_up_is_missing_field(api, declare):
    declare({"favoriteColor": {"type": "string", "required": True}})
    response = sign_up(api)
    assert response.status_code == 400
    assert error_of(response) == {"code": "MISSING_FIELD", "status": 400, "message": "favoriteColor is required"}
    assert stored_user() is None


def test_a_required_field_with_a_default_may_be_left_out(api, declare):
    declare({"favoriteColor": {"type": "string", "required": True, "default_value": "red"}})
    assert sign_up(api).json()["user"]["favoriteColor"] == "red"


def test_a_missing_field_gets_its_default(api, declare):
    declare({"newsletter": {"type": "boolean", "default_value": False}})
    assert sign_up(api).json()["user"]["newsletter"] is False


def test_a_callable_default_is_called_per_user(api, declare):
    calls = iter(["first", "second"])
    declare({"ticket": {"type": "string", "default_value": lambda: next(calls)}})
    assert sign_up(api).json()["user"]["ticket"] == "first"
    assert sign_up(api, email="bob@example.com").json()["user"]["ticket"] == "second"


def test_an_input_false_field_set_by_the_client_is_not_allowed(api, declare):
    declare({"role": {"type": "string", "input": False}})
    response = sign_up(api, role="admin")
    assert response.status_code == 400
    assert error_of(response) == {"code": "FIELD_NOT_ALLOWED", "status": 400,
                                  "message": "role is not allowed to be set"}


def test_an_input_false_field_with_a_default_takes_the_default_whatever_the_client_sends(api, declare):
    # better-auth's parseInputData: at creation the default replaces the client's value silently.
    declare({"role": {"type": "string", "input": False, "default_value": "user"}})
    response = sign_up(api, role="admin")
    assert response.status_code == 200
    assert response.json()["user"]["role"] == "user"


def test_a_falsy_value_of_an_input_false_field_is_ignored(api, declare):
    declare({"role": {"type": "string", "input": False}})
    response = sign_up(api, role="")
    assert response.status_code == 200
    assert response.json()["user"]["role"] is None


def test_a_field_not_returned_is_stored_but_hidden(api, declare):
    declare({"secretNote": {"type": "string", "returned": False}})
    response = sign_up(api, secretNote="hush")
    assert "secretNote" not in response.json()["user"]
    assert _stored_value(stored_user(), "secret_note") == "hush"


def _stored_value(user, field_name):
    if hasattr(user, field_name):
        return getattr(user, field_name)
    return AuthProfile.objects.get(user=user).data.get(field_name)


# --- answers ----------------------------------------------------------------------------------------
@pytest.fixture
def ada(api, declare):
    declare(COLOR)
    assert sign_up(api, favoriteColor="teal").status_code == 200
    return api


def test_get_session_returns_the_field(ada):
    assert ada.api_get("/get-session").json()["user"]["favoriteColor"] == "teal"


def test_sign_in_returns_the_field(ada, api):
    response = api.api_post("/sign-in/email", {"email": "ada@example.com", "password": PASSWORD})
    assert response.json()["user"]["favoriteColor"] == "teal"


def test_get_session_hides_a_field_not_returned(api, declare):
    declare({"secretNote": {"type": "string", "returned": False}})
    sign_up(api, secretNote="hush")
    assert "secretNote" not in api.api_get("/get-session").json()["user"]


# --- update-user ------------------------------------------------------------------------------------
def test_update_user_changes_the_field(ada):
    response = ada.api_post("/update-user", {"favoriteColor": "plum"})
    assert response.status_code == 200, response.content
    assert ada.api_get("/get-session").json()["user"]["favoriteColor"] == "plum"


def test_update_user_checks_the_type(ada):
    response = ada.api_post("/update-user", {"favoriteColor": ["plum"]})
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_update_user_refuses_an_input_false_field(api, declare):
    declare({"role": {"type": "string", "input": False, "default_value": "user"}})
    sign_up(api)
    response = api.api_post("/update-user", {"role": "admin"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "FIELD_NOT_ALLOWED"
    assert api.api_get("/get-session").json()["user"]["role"] == "user"


def test_update_user_does_not_apply_defaults_or_require_fields(api, declare):
    declare({"favoriteColor": {"type": "string", "required": True, "default_value": "red"}})
    sign_up(api, favoriteColor="teal")
    api.api_post("/update-user", {"name": "Ada L."})
    assert api.api_get("/get-session").json()["user"]["favoriteColor"] == "teal"


# --- storage ----------------------------------------------------------------------------------------
@needs_no_model_field
def test_without_a_model_field_the_value_lives_in_the_profile(ada):
    assert AuthProfile.objects.get(user=stored_user()).data == {"favorite_color": "teal"}


@needs_no_model_field
def test_a_date_in_the_profile_comes_back_as_the_same_instant(api, declare):
    declare({"birthday": {"type": "date"}})
    sign_up(api, birthday="1815-12-10T08:00:00+01:00")
    assert api.api_get("/get-session").json()["user"]["birthday"] == "1815-12-10T07:00:00.000Z"


@needs_model_field
def test_with_a_model_field_the_value_lives_in_the_model(ada):
    assert stored_user().favorite_color == "teal"
    assert "favorite_color" not in AuthProfile.objects.get(user=stored_user()).data


def test_field_name_chooses_where_it_is_stored(api, declare):
    declare({"color": {"type": "string", "field_name": "favorite_color"}})
    sign_up(api, color="teal")
    assert _stored_value(stored_user(), "favorite_color") == "teal"


def test_a_user_created_without_sign_up_gets_the_defaults(declare):
    declare({"plan": {"type": "string", "default_value": "free"}, "note": {"type": "string"}})
    users.create(email="sso@example.com", name="SSO")  # as social and SSO sign-ups do
    wire_user = users.to_wire(users.find_by_email("sso@example.com"))
    assert (wire_user["plan"], wire_user["note"]) == ("free", None)


# --- made-up users --------------------------------------------------------------------------------
def test_a_taken_address_answers_the_same_fields_as_a_new_one(api, declare, configure, make_user):
    configure(email_and_password={"auto_sign_in": False})
    declare({**COLOR, "plan": {"type": "string", "default_value": "free"}})
    make_user(email="taken@example.com")
    fresh = sign_up(api, email="new@example.com", favoriteColor="teal").json()["user"]
    taken = sign_up(api, email="taken@example.com", favoriteColor="teal").json()["user"]
    assert set(taken) == set(fresh)
    assert (taken["favoriteColor"], taken["plan"]) == (fresh["favoriteColor"], fresh["plan"]) == ("teal", "free")


# --- the API document ------------------------------------------------------------------------------
@pytest.fixture
def document(api, declare):
    declare({**COLOR, "role": {"type": "string", "input": False}, "secretNote": {"type": "string",
                                                                                   "returned": False}})
    return api.api_get("/openapi.json").json()


def test_the_user_schema_documents_returned_fields(document):
    properties = document["components"]["schemas"]["User"]["properties"]
    assert properties["favoriteColor"]["type"] == ["string", "null"]
    assert "role" in properties and "secretNote" not in properties


def test_sign_up_and_update_user_bodies_document_fields_clients_may_set(document):
    for path in ("/sign-up/email", "/update-user"):
        properties = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"][
            "properties"]
        assert properties["favoriteColor"]["type"] == ["string", "null"]
        assert "role" not in properties


def test_the_document_without_declared_fields_is_as_before(api, db):
    assert "favoriteColor" not in api.api_get("/openapi.json").json()["components"]["schemas"]["User"]["properties"]


# --- checks -----------------------------------------------------------------------------------------
def check_ids(configure, fields):
    configure(user={"additional_fields": fields})
    return {problem.id for problem in check_setting_values()}


@pytest.mark.parametrize("fields", [
    pytest.param({"favoriteColor": {"type": "colour"}}, id="unknown-type"),
    pytest.param({"favoriteColor": {}}, id="no-type"),
    pytest.param({"favoriteColor": {"type": "string", "defaultValue": "red"}}, id="camel-case-option"),
    pytest.param({"favoriteColor": {"type": "number", "default_value": "3"}}, id="default-of-wrong-type"),
    pytest.param({"email": {"type": "string"}}, id="shadows-core-field"),
    pytest.param({"favorite color": {"type": "string"}}, id="not-a-name"),
    pytest.param({"role": {"type": "string", "required": True, "input": False}}, id="required-but-never-given"),
])
def test_a_wrong_declaration_is_E013(configure, fields):
    assert "authservice.E013" in check_ids(configure, fields)


@pytest.mark.parametrize("fields", [
    pytest.param({"favoriteColor": {"type": "string", "required": "yes"}}, id="required-not-bool"),
    pytest.param({"favoriteColor": "string"}, id="declaration-not-dict"),
    pytest.param([{"favoriteColor": {"type": "string"}}], id="list-not-dict"),
])
def test_a_declaration_value_of_the_wrong_type_is_E003(configure, fields):
    assert "authservice.E003" in check_ids(configure, fields)


def test_a_good_declaration_passes(configure, db):
    assert check_ids(configure, {"favoriteColor": {"type": "string", "required": False, "default_value": "red",
                                                   "input": True, "returned": True}}) == set()


def test_a_field_stored_in_a_managed_model_field_is_E014(configure):
    configure(user={"additional_fields": {"staff": {"type": "boolean", "field_name": "is_staff"}}})
    assert [problem.id for problem in check_model_fields()] == ["authservice.E014"]


@pytest.mark.parametrize("field_name", ["is_staff", "is_superuser", "password", "email"])
def test_a_field_stored_in_a_managed_model_field_is_refused_at_runtime_too(configure, field_name):
    # A server started without system checks must not let users set it.
    configure(user={"additional_fields": {"sneaky": {"type": "boolean", "field_name": field_name}}})
    with pytest.raises(ImproperlyConfigured, match="E014"):
        additional_fields.declared()


def test_sign_up_cannot_set_a_managed_model_field(api, configure, db):
    configure(user={"additional_fields": {"secret": {"type": "string", "field_name": "password"}}})
    response = sign_up(api, secret="chosen-by-the-client")
    assert response.status_code == 500
    assert not get_user_model().objects.exists()


@needs_model_field
def test_a_model_field_that_cannot_hold_the_type_is_E014(configure):
    configure(user={"additional_fields": {"favoriteColor": {"type": "number"}}})
    problems = check_model_fields()
    assert [problem.id for problem in problems] == ["authservice.E014"]
    assert "CharField" in problems[0].msg


def test_the_model_field_tests_pass_under_a_model_with_the_field():
    if _model_has_favorite_color():
        pytest.skip("this run is that one")
    result = run_pytest("tests.settings_email_user", "tests/test_additional_fields.py",
                        "-k", "lives_in_the_model or cannot_hold")
    assert result.returncode == 0 and "2 passed" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]


def test_snake_case_of_wire_names():
    assert [additional_fields.snake_case(key) for key in ("favoriteColor", "userID", "plain")] == \
        ["favorite_color", "user_id", "plain"]


def test_dates_go_over_the_wire_as_iso_strings_with_milliseconds():
    value = datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=timezone.utc)
    assert additional_fields.to_wire_value(value) == "2024-05-01T10:00:00.123Z"


def test_dates_before_the_year_1000_keep_four_digit_years_on_the_wire():
    assert additional_fields.to_wire_value(datetime(1, 1, 1, tzinfo=timezone.utc)) == "0001-01-01T00:00:00.000Z"


# --- the model column's bounds ------------------------------------------------------------------------
@pytest.mark.parametrize(("column", "kind", "bounds"), [
    (models.CharField(max_length=40), "string", {"max_length": 40}),
    (models.TextField(), "string", {}),
    (models.SmallIntegerField(), "number", {"integer": True, "minimum": -32768, "maximum": 32767}),
    (models.PositiveIntegerField(), "number", {"integer": True, "minimum": 0, "maximum": 2147483647}),
    (models.DecimalField(max_digits=5, decimal_places=2), "number", {"minimum": -999.99, "maximum": 999.99}),
    (models.FloatField(), "number", {}),
    (models.JSONField(), "string", {}),
])
def test_a_model_column_bounds_the_input_it_stores(column, kind, bounds):
    assert additional_fields.column_bounds(column, kind) == bounds


@pytest.mark.parametrize(("value", "error"), [
    (2.5, "Invalid input: expected int, received number"),
    (32768, "Too big: expected number to be <=32767"),
    (-32769, "Too small: expected number to be >=-32768"),
])
def test_a_number_past_its_column_bounds_is_refused(value, error):
    field = inputs.Number(**additional_fields.column_bounds(models.SmallIntegerField(), "number"))
    with pytest.raises(serializers.ValidationError) as raised:
        field.run_validation(value)
    assert raised.value.detail == [error]


def test_a_number_within_its_column_bounds_passes():
    field = inputs.Number(**additional_fields.column_bounds(models.SmallIntegerField(), "number"))
    assert [field.run_validation(value) for value in (32767, -32768, 4.0)] == [32767, -32768, 4.0]
