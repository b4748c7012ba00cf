"""Bad input of every kind gets a clean JSON error, never a 500 (core.md §1.1-§1.4, D1, D2, D10)."""

import json

import pytest
from django.contrib.auth import get_user_model

from authservice import users
from authservice.models import Session
from tests.conftest import BASE, ORIGIN, PASSWORD, error_of

FORM = "application/x-www-form-urlencoded"


def raw_post(api, path, data, content_type="application/json", **extra):
    return api.generic("POST", BASE + path, data, content_type=content_type, HTTP_ORIGIN=ORIGIN, **extra)


# --- JSON syntax -------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [b"{", b"{'email': 1}", b"{\"a\": }", b"nope", b"{\"a\":1}x",
                                  b"\xef\xbb\xbf{}"])
def test_malformed_json_is_400_bad_request(api, db, data):
    response = raw_post(api, "/sign-in/email", data)
    assert response.status_code == 400
    assert error_of(response) == {"message": "Invalid JSON in request body", "code": "BAD_REQUEST",
                                  "status": 400}


def test_invalid_utf8_is_400_bad_request(api, db):
    response = raw_post(api, "/sign-in/email", b'{"email": "\xff\xfe@example.com", "password": "x"}')
    assert error_of(response)["code"] == "BAD_REQUEST"


def test_json_nested_100000_deep_is_400_not_a_crash(api, db):
    response = raw_post(api, "/sign-in/email", "[" * 100000 + "]" * 100000)
    assert response.status_code == 400
    assert error_of(response)["code"] == "BAD_REQUEST"


def test_deep_nesting_inside_an_object_is_400(api, db):
    data = '{"email": ' + "[" * 100000 + "]" * 100000 + "}"
    assert raw_post(api, "/sign-in/email", data).status_code == 400


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_are_400_bad_request(api, db, constant):
    response = raw_post(api, "/sign-in/email", '{"email": %s, "password": "x"}' % constant)
    assert error_of(response)["code"] == "BAD_REQUEST"


@pytest.mark.parametrize("number", ["1e309", "-1e309", "[1, 1e999]"])
def test_numbers_that_overflow_to_infinity_are_400_bad_request(api, db, number):
    response = raw_post(api, "/sign-in/email", '{"email": %s, "password": "x"}' % number)
    assert error_of(response)["code"] == "BAD_REQUEST"


def test_a_json_null_body_is_a_validation_error(api, db):
    response = raw_post(api, "/sign-up/email", "null")
    assert error_of(response) == {"message": "[body] Invalid input: expected object, received null",
                                  "code": "VALIDATION_ERROR", "status": 400}


def test_duplicate_json_keys_take_the_last_value(api, user):
    data = '{"email": "nobody@example.com", "email": "ada@example.com", "password": "%s"}' % PASSWORD
    response = raw_post(api, "/sign-in/email", data)
    assert response.status_code == 200
    assert response.json()["user"]["email"] == "ada@example.com"


# --- size --------------------------------------------------------------------------------------
def test_a_body_over_the_upload_limit_is_413(api, db, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"name": "x" * 2000, "email": "a@example.com", "password": PASSWORD})
    response = raw_post(api, "/sign-up/email", body)
    assert response.status_code == 413
    assert error_of(response) == {"message": "Request body is too large", "code": "PAYLOAD_TOO_LARGE",
                                  "status": 413}
    assert not get_user_model().objects.exists()


def test_a_form_body_over_the_upload_limit_is_413(api, db, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = raw_post(api, "/sign-in/email", "email=" + "a" * 2000, content_type=FORM)
    assert error_of(response)["code"] == "PAYLOAD_TOO_LARGE"


def test_a_form_with_too_many_fields_is_413(api, db, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    response = raw_post(api, "/sign-in/email", "&".join(f"f{i}=1" for i in range(50)), content_type=FORM)
    assert error_of(response)["code"] == "PAYLOAD_TOO_LARGE"


def test_a_body_just_under_the_limit_is_accepted(api, db, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"name": "x" * 800, "email": "a@example.com", "password": PASSWORD})
    assert raw_post(api, "/sign-up/email", body).status_code == 200


# --- NUL characters (PostgreSQL refuses them in text columns) ----------------------------------
@pytest.mark.parametrize("field", ["name", "email", "password", "image", "callbackURL"])
def test_nul_in_a_sign_up_string_is_400(api, db, field):
    body = {"name": "Ada", "email": "ada@example.com", "password": PASSWORD, field: "a\x00b"}
    response = api.api_post("/sign-up/email", body)
    assert response.status_code in (400, 403)
    assert error_of(response)["code"] in ("VALIDATION_ERROR", "INVALID_CALLBACK_URL")
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("field", ["email", "password"])
def test_nul_in_a_sign_in_string_is_400(api, user, field):
    body = {"email": "ada@example.com", "password": PASSWORD, field: "ada\x00@example.com"}
    response = api.api_post("/sign-in/email", body)
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_nul_in_the_revoke_session_token_is_400(signed_in):
    response = signed_in.api_post("/revoke-session", {"token": "abc\x00def"})
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_nul_in_a_form_body_is_400(api, user):
    response = raw_post(api, "/sign-in/email", "email=ada%00%40example.com&password=x", content_type=FORM)
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_nul_in_a_query_value_is_400(api, db):
    response = api.api_get("/error", {"error": "a\x00b"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_nul_in_a_get_session_query_value_is_harmless(signed_in):
    response = signed_in.api_get("/get-session", {"disableRefresh": "\x00"})
    assert response.status_code == 200


def test_nul_in_a_post_query_callback_url_is_rejected(api, user):
    response = api.api_post("/sign-in/email?callbackURL=%2Fa%00b",
                            {"email": user.email, "password": PASSWORD})
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"


@pytest.mark.parametrize("path", ["/reset-password/ab%00cd", "/no%00such", "/get-session%00"])
def test_nul_in_the_path_is_a_clean_4xx(api, db, path):
    response = api.get(BASE + path)
    assert response.status_code in (400, 404)
    error_of(response)


def test_nul_in_an_ignored_body_key_is_harmless(api, user):
    response = api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD, "x\x00": "\x00"})
    assert response.status_code == 200


# --- content types -----------------------------------------------------------------------------
@pytest.mark.parametrize("content_type", ["text/plain", "text/plain; charset=utf-8", "application/xml",
                                          "multipart/form-data; boundary=x"])
def test_a_json_only_endpoint_refuses_other_types_with_415(signed_in, content_type):
    response = signed_in.generic("POST", BASE + "/revoke-session", '{"token": "x"}',
                                 content_type=content_type, HTTP_ORIGIN=ORIGIN)
    assert response.status_code == 415
    assert error_of(response) == {
        "message": f'Content-Type "{content_type}" is not allowed. Allowed types: application/json',
        "code": "UNSUPPORTED_MEDIA_TYPE", "status": 415}


def test_a_form_on_a_json_only_endpoint_is_415(signed_in):
    response = signed_in.generic("POST", BASE + "/revoke-session", "token=x", content_type=FORM,
                                 HTTP_ORIGIN=ORIGIN)
    assert error_of(response)["message"] == \
        f'Content-Type "{FORM}" is not allowed. Allowed types: application/json'


def test_form_accepting_endpoints_list_both_types(api, db):
    response = raw_post(api, "/sign-in/email", "x", content_type="text/plain")
    assert error_of(response) == {
        "message": 'Content-Type "text/plain" is not allowed. Allowed types: '
                   "application/x-www-form-urlencoded, application/json",
        "code": "UNSUPPORTED_MEDIA_TYPE", "status": 415}


def test_a_body_without_content_type_is_415(api, db):
    response = raw_post(api, "/sign-out", "{}", content_type="")
    assert error_of(response) == {
        "message": "Content-Type is required. Allowed types: application/json",
        "code": "UNSUPPORTED_MEDIA_TYPE", "status": 415}


def test_a_form_endpoint_body_without_content_type_is_415_listing_both(api, db):
    response = raw_post(api, "/sign-up/email", "{}", content_type="")
    assert error_of(response)["message"] == \
        "Content-Type is required. Allowed types: application/x-www-form-urlencoded, application/json"


def test_json_with_charset_parameter_is_accepted(api, user):
    body = json.dumps({"email": user.email, "password": PASSWORD})
    assert raw_post(api, "/sign-in/email", body, content_type="application/json; charset=utf-8"
                    ).status_code == 200


def test_media_type_is_compared_case_insensitively(api, user):
    body = json.dumps({"email": user.email, "password": PASSWORD})
    assert raw_post(api, "/sign-in/email", body, content_type="Application/JSON").status_code == 200


def test_a_request_without_body_skips_the_content_type_check(api, db):
    assert raw_post(api, "/sign-out", "", content_type="text/plain").status_code == 200


# --- form bodies -------------------------------------------------------------------------------
def test_sign_in_accepts_a_form_body(api, user):
    response = raw_post(api, "/sign-in/email", f"email=ada%40example.com&password={PASSWORD}",
                        content_type=FORM)
    assert response.status_code == 200
    assert response.json()["user"]["email"] == "ada@example.com"


def test_sign_up_accepts_a_form_body(api, db):
    response = raw_post(api, "/sign-up/email", f"name=&email=new%40example.com&password={PASSWORD}",
                        content_type=FORM)
    assert response.status_code == 200
    assert response.json()["user"] == {**response.json()["user"], "name": "", "email": "new@example.com"}


def test_remember_me_false_in_a_form_fails_validation(api, user):
    response = raw_post(api, "/sign-in/email",
                        f"email=ada%40example.com&password={PASSWORD}&rememberMe=false", content_type=FORM)
    assert error_of(response) == {
        "message": "[body.rememberMe] Invalid input: expected boolean, received string",
        "code": "VALIDATION_ERROR", "status": 400}


def test_a_form_with_a_repeated_key_uses_the_last_value(api, user):
    response = raw_post(api, "/sign-in/email",
                        f"email=x&email=ada%40example.com&password={PASSWORD}", content_type=FORM)
    assert response.status_code == 200


# --- validation messages -----------------------------------------------------------------------
def test_sign_up_with_an_empty_object_names_every_field(api, db):
    response = api.api_post("/sign-up/email", {})
    assert error_of(response) == {
        "message": "[body.name] Invalid input: expected string, received undefined; "
                   "[body.email] Invalid input: expected string, received undefined; "
                   "[body.password] Invalid input: expected string, received undefined",
        "code": "VALIDATION_ERROR", "status": 400}


def test_sign_up_without_a_body(api, db):
    response = api.api_post("/sign-up/email")
    assert error_of(response)["message"] == "[body] Invalid input: expected object, received undefined"


@pytest.mark.parametrize("data,received", [("[]", "array"), ('[{"a": 1}]', "array"), ('"text"', "string"),
                                           ("42", "number"), ("true", "boolean")])
def test_a_body_that_is_not_an_object(api, db, data, received):
    response = raw_post(api, "/sign-up/email", data)
    assert error_of(response) == {"message": f"[body] Invalid input: expected object, received {received}",
                                  "code": "VALIDATION_ERROR", "status": 400}


def test_wrong_types_are_named_with_what_was_received(api, db):
    response = api.api_post("/sign-up/email", {"name": 1, "email": None, "password": ["x"],
                                               "rememberMe": "yes", "image": {}})
    assert error_of(response)["message"] == (
        "[body.name] Invalid input: expected string, received number; "
        "[body.email] Invalid input: expected string, received null; "
        "[body.password] Invalid input: expected string, received array; "
        "[body.image] Invalid input: expected string, received object; "
        "[body.rememberMe] Invalid input: expected boolean, received string")


@pytest.mark.parametrize("email", ["not-an-email", "a@", "@example.com", "a b@example.com", ""])
def test_a_bad_sign_up_email_is_invalid_email_address(api, db, email):
    response = api.api_post("/sign-up/email", {"name": "A", "email": email, "password": PASSWORD})
    assert error_of(response)["message"] == "[body.email] Invalid email address"


def test_a_300_character_email_is_rejected_on_sign_up(api, db):
    email = "a" * 288 + "@example.com"
    response = api.api_post("/sign-up/email", {"name": "A", "email": email, "password": PASSWORD})
    assert response.status_code == 400
    assert error_of(response)["message"] == "[body.email] Invalid email address"


def test_a_300_character_email_is_invalid_email_on_sign_in(api, db):
    response = api.api_post("/sign-in/email", {"email": "a" * 288 + "@example.com", "password": "x"})
    assert error_of(response)["code"] == "INVALID_EMAIL"


@pytest.mark.skipif(users.layout().name == "first_last",
                    reason="first_name/last_name have a maximum length (auth.User: 150 each)")
def test_a_very_long_name_is_stored(api, db):
    name = "N" * 20000
    response = api.api_post("/sign-up/email", {"name": name, "email": "a@example.com", "password": PASSWORD})
    assert response.status_code == 200
    assert users.name_of(get_user_model().objects.get()) == name


def test_a_very_long_password_on_sign_in_is_just_wrong(api, user):
    response = api.api_post("/sign-in/email", {"email": user.email, "password": "p" * 100000})
    assert error_of(response)["code"] == "INVALID_EMAIL_OR_PASSWORD"


def test_unicode_survives_the_round_trip(api, db):
    response = api.api_post("/sign-up/email", {"name": "Zoë 😀 — ✓", "email": "zoe@example.com",
                                               "password": PASSWORD})
    assert response.json()["user"]["name"] == "Zoë 😀 — ✓"


def test_lone_surrogate_escapes_are_400_bad_request(api, db):
    response = raw_post(api, "/sign-up/email",
                        '{"name": "\\ud800", "email": "a@example.com", "password": "%s"}' % PASSWORD)
    assert error_of(response)["code"] == "BAD_REQUEST"
    assert not get_user_model().objects.exists()


def test_a_surrogate_pair_escape_is_a_normal_character(api, db):
    response = raw_post(api, "/sign-up/email",
                        '{"name": "\\ud83d\\ude00", "email": "a@example.com", "password": "%s"}' % PASSWORD)
    assert response.json()["user"]["name"] == "\U0001F600"


# --- routing -----------------------------------------------------------------------------------
@pytest.mark.parametrize("method,path", [
    ("GET", "/nope"), ("GET", "/get-session/"), ("GET", "//get-session"), ("GET", "/get-session//"),
    ("POST", "/sign-in/email/"), ("POST", "/sign-in//email"), ("GET", "/sign-in/email"),
    ("PUT", "/sign-in/email"), ("DELETE", "/get-session"), ("PATCH", "/sign-out"), ("GET", ""),
    ("GET", "/"), ("POST", "/ok"),
])
def test_unknown_routes_and_methods_are_404_json(api, db, method, path):
    response = api.generic(method, BASE + path, HTTP_ORIGIN=ORIGIN)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert error_of(response) == {"message": "Not Found", "code": "NOT_FOUND", "status": 404}


def test_a_trailing_slash_is_not_redirected(api, db, settings):
    settings.APPEND_SLASH = True
    response = api.get(BASE + "/ok/")
    assert response.status_code == 404


def test_post_get_session_is_405(api, db):
    response = api.api_post("/get-session")
    assert error_of(response)["code"] == "METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED"


# --- error shape -------------------------------------------------------------------------------
def test_every_error_body_has_exactly_message_code_and_integer_status(api, signed_in, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10
    responses = [
        raw_post(api, "/sign-in/email", "{"),
        raw_post(api, "/sign-in/email", "x" * 20),
        api.api_post("/sign-in/email", {}),
        api.api_post("/sign-in/email", {"email": "nobody@example.com", "password": "x"}),
        api.api_get("/nope"),
        api.api_post("/get-session"),
        signed_in.api_post("/sign-out", HTTP_ORIGIN="https://evil.com"),
    ]
    for response in responses:
        body = error_of(response)
        assert isinstance(body["status"], int) and not isinstance(body["status"], bool)
        assert isinstance(body["message"], str) and isinstance(body["code"], str)
        assert body["code"] == body["code"].upper()


def test_a_bad_request_writes_nothing(api, db):
    api.api_post("/sign-up/email", {"name": "A", "email": "bad", "password": PASSWORD})
    assert not get_user_model().objects.exists()
    assert not Session.objects.exists()
