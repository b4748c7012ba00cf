"""Callback and redirect URL fields (core.md §1.9) and the order of checks (§1.1)."""

import pytest

from authservice.models import Session
from tests.conftest import PASSWORD, error_of

ATTACKS = [
    "https://evil.com",
    "https://evil.com/x",
    "//evil.com",
    "/\\evil.com",
    "/%2fevil",
    "/%2Fevil.com",
    "/%5cevil.com",
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "http://127.0.0.1:8000@evil.com/",
    "/\tevil",
    "\\\\evil.com",
    "evil.com",
    "dashboard",
]


def sign_in(api, **body):
    payload = {"email": "ada@example.com", "password": PASSWORD}
    payload.update(body)
    return api.api_post("/sign-in/email", payload)


@pytest.mark.parametrize("url", ATTACKS)
def test_an_untrusted_callback_url_on_sign_in_is_403(api, user, url):
    response = sign_in(api, callbackURL=url)
    assert response.status_code == 403
    assert error_of(response) == {"message": "Invalid callbackURL", "code": "INVALID_CALLBACK_URL",
                                  "status": 403}
    assert not Session.objects.exists()


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000.evil.com/", "http://[bad", "https://app:99999/"])
def test_a_callback_url_that_does_not_parse_is_400_not_untrusted(api, user, url):
    # A port that is not a number or a broken IPv6 host is malformed input (I4), refused before trust.
    response = sign_in(api, callbackURL=url)
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert not Session.objects.exists()


@pytest.mark.parametrize("url", ["/dashboard", "/ok?x=1&y=%2F", "/a/b#frag", "/",
                                 "http://127.0.0.1:8000/app", "http://127.0.0.1:8000"])
def test_a_safe_relative_or_trusted_callback_url_is_accepted(api, user, url):
    response = sign_in(api, callbackURL=url)
    assert response.status_code == 200
    assert response.json()["url"] == url


def test_a_callback_url_on_a_configured_trusted_origin_is_accepted(configure, api, user):
    configure(trusted_origins=["https://app.example.com"])
    assert sign_in(api, callbackURL="https://app.example.com/welcome").status_code == 200


def test_a_callback_url_matching_a_trusted_glob_is_accepted(configure, api, user):
    configure(trusted_origins=["https://*.example.com"])
    assert sign_in(api, callbackURL="https://app.example.com/x").status_code == 200
    assert error_of(sign_in(api, callbackURL="https://example.org/x"))["code"] == \
        "INVALID_CALLBACK_URL"


def test_a_custom_scheme_callback_url_is_accepted_when_listed(configure, api, user):
    configure(trusted_origins=["myapp://"])
    assert sign_in(api, callbackURL="myapp://auth/done").status_code == 200
    assert error_of(sign_in(api, callbackURL="otherapp://auth/done"))["code"] == \
        "INVALID_CALLBACK_URL"


def test_a_custom_scheme_entry_with_host_requires_that_host(configure, api, user):
    configure(trusted_origins=["exp://192.168.1.5:8081"])
    assert sign_in(api, callbackURL="exp://192.168.1.5:8081/--/home").status_code == 200
    assert error_of(sign_in(api, callbackURL="exp://10.0.0.1:8081/--/home"))["code"] == \
        "INVALID_CALLBACK_URL"


def test_a_custom_scheme_entry_with_path_requires_that_path_prefix(configure, api, user):
    configure(trusted_origins=["myapp://host/app"])
    assert sign_in(api, callbackURL="myapp://host/app/settings").status_code == 200
    assert sign_in(api, callbackURL="myapp://host/app").status_code == 200
    for url in ("myapp://host/other", "myapp://host/app/../other", "myapp://host/application"):
        assert error_of(sign_in(api, callbackURL=url))["code"] == "INVALID_CALLBACK_URL", url


@pytest.mark.parametrize("value", [["/dashboard"], {"url": "/dashboard"}, 5, True])
def test_a_callback_url_that_is_not_a_string_is_400(api, user, value):
    response = sign_in(api, callbackURL=value)
    assert error_of(response) == {"message": "Invalid callbackURL: expected a string",
                                  "code": "VALIDATION_ERROR", "status": 400}


def test_an_empty_callback_url_is_skipped(api, user):
    response = sign_in(api, callbackURL="")
    assert response.status_code == 200
    assert response.json()["redirect"] is False


def test_a_callback_url_in_the_query_of_a_post_is_checked(api, user):
    response = api.api_post("/sign-in/email?callbackURL=https%3A%2F%2Fevil.com",
                            {"email": user.email, "password": PASSWORD})
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"


@pytest.mark.parametrize("field,label,code", [
    ("redirectTo", "redirectURL", "INVALID_REDIRECT_URL"),
    ("errorCallbackURL", "errorCallbackURL", "INVALID_ERROR_CALLBACK_URL"),
    ("newUserCallbackURL", "newUserCallbackURL", "INVALID_NEW_USER_CALLBACK_URL"),
])
def test_every_url_field_is_checked_router_wide(api, user, field, label, code):
    response = sign_in(api, **{field: "https://evil.com"})
    assert error_of(response)["code"] == code
    response = sign_in(api, **{field: ["x"]})
    assert error_of(response) == {"message": f"Invalid {label}: expected a string",
                                  "code": "VALIDATION_ERROR", "status": 400}


def test_url_fields_are_checked_on_cookie_less_requests_to_any_post_endpoint(api, db):
    response = api.api_post("/sign-out", {"callbackURL": "//evil.com"})
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"


# --- order of checks ---------------------------------------------------------------------------
def test_an_untrusted_callback_url_is_403_even_with_a_wrong_password(api, user):
    response = sign_in(api, password="wrong password", callbackURL="https://evil.com")
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"


def test_an_untrusted_callback_url_is_403_even_for_an_unknown_user(api, db):
    response = sign_in(api, email="nobody@example.com", callbackURL="//evil.com")
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"


def test_an_untrusted_callback_url_is_403_before_schema_validation(api, db):
    response = api.api_post("/sign-in/email", {"callbackURL": "https://evil.com"})
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"


def test_a_malformed_body_without_session_is_400_not_401(api, db):
    response = api.api_post("/revoke-session", {"token": ["not", "a", "string"]})
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_a_valid_body_without_session_is_401(api, db):
    assert api.api_post("/revoke-session", {"token": "abc"}).status_code == 401


def test_the_origin_check_comes_before_url_fields(signed_in):
    response = signed_in.api_post("/sign-out", {"callbackURL": "https://evil.com"},
                                  HTTP_ORIGIN="https://evil.com")
    assert error_of(response)["code"] == "INVALID_ORIGIN"


def test_content_type_is_checked_before_url_fields(api, db):
    response = api.api_post("/sign-out", {"callbackURL": "https://evil.com"}, content_type="text/plain")
    assert response.status_code == 415
