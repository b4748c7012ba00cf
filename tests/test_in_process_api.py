"""``auth.api.<name>(...)``: every endpoint as a Python function (core.md §1.10, D3)."""

import json

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from authservice import auth
from authservice.errors import APIError
from authservice.models import Session
from tests.conftest import PASSWORD
from tests.test_cookies import set_cookies

CREDENTIALS = {"email": "ada@example.com", "password": PASSWORD}


def cookie_header(set_cookie_lines):
    """The ``Cookie`` header a browser would send back after these ``Set-Cookie`` lines."""
    return "; ".join(f"{name}={value}" for name, (value, _) in set_cookies(set_cookie_lines).items())


def test_sign_in_returns_the_data(user):
    result = auth.api.sign_in_email(body=CREDENTIALS)
    assert isinstance(result, dict)
    assert list(result) == ["redirect", "token", "user"]
    assert result["user"]["email"] == "ada@example.com"
    assert Session.objects.filter(token=result["token"]).exists()


def test_return_headers_gives_headers_and_response(user):
    result = auth.api.sign_in_email(body=CREDENTIALS, return_headers=True)
    assert set(result) == {"headers", "response"}
    assert result["response"]["token"]
    cookie = result["headers"].get("set-cookie")
    assert cookie.startswith("auth.session_token=")
    assert "Max-Age=604800" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_set_cookie_from_headers_carries_the_signed_token(user):
    from authservice.cookies import signed_value

    result = auth.api.sign_in_email(body=CREDENTIALS, return_headers=True)
    value, _ = set_cookies(result["headers"].get_list("set-cookie"))["auth.session_token"]
    assert value == signed_value(result["response"]["token"])


def test_headers_are_case_insensitive(user):
    headers = auth.api.sign_in_email(body=CREDENTIALS, return_headers=True)["headers"]
    assert headers.get("Set-Cookie") == headers.get("set-cookie") == headers["SET-COOKIE"]


def test_remember_me_false_returns_both_cookies_as_separate_lines(user):
    headers = auth.api.sign_in_email(body={**CREDENTIALS, "rememberMe": False},
                                     return_headers=True)["headers"]
    names = sorted(set_cookies(headers.get_list("set-cookie")))
    assert names == ["auth.dont_remember", "auth.session_token"]


def test_as_response_gives_an_http_response(user):
    response = auth.api.sign_in_email(body=CREDENTIALS, as_response=True)
    assert isinstance(response, HttpResponse)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content)["user"]["email"] == "ada@example.com"
    assert "auth.session_token" in response.cookies


def test_as_response_returns_errors_instead_of_raising(db):
    response = auth.api.sign_in_email(body={"email": "nobody@example.com", "password": "x"},
                                      as_response=True)
    assert response.status_code == 401
    assert json.loads(response.content) == {"message": "Invalid email or password",
                                            "code": "INVALID_EMAIL_OR_PASSWORD", "status": 401}


def test_errors_raise_api_error_with_message_code_and_status_name(db):
    with pytest.raises(APIError) as caught:
        auth.api.sign_in_email(body={"email": "nobody@example.com", "password": "x"})
    error = caught.value
    assert error.message == "Invalid email or password"
    assert error.code == "INVALID_EMAIL_OR_PASSWORD"
    assert error.status == "UNAUTHORIZED"
    assert error.status_code == 401


def test_validation_errors_carry_the_status_name_too(db):
    with pytest.raises(APIError) as caught:
        auth.api.sign_up_email(body={})
    assert caught.value.status == "BAD_REQUEST"
    assert caught.value.status_code == 400
    assert caught.value.code == "VALIDATION_ERROR"
    assert caught.value.message.startswith("[body.name] Invalid input")


def test_a_session_guard_without_session_raises_unauthorized(db):
    with pytest.raises(APIError) as caught:
        auth.api.revoke_sessions(headers={})
    assert (caught.value.status, caught.value.code) == ("UNAUTHORIZED", "UNAUTHORIZED")


def test_get_session_without_cookie_returns_none(db):
    assert auth.api.get_session(headers={}) is None


def test_get_session_headers_forbid_caching(db):
    headers = auth.api.get_session(headers={}, return_headers=True)["headers"]
    assert (headers.get("cache-control"), headers.get("pragma")) == ("no-store", "no-cache")


def test_get_session_with_the_cookie_returns_the_session(user):
    signed = auth.api.sign_in_email(body=CREDENTIALS, return_headers=True)
    headers = {"cookie": cookie_header(signed["headers"].get_list("set-cookie"))}
    result = auth.api.get_session(headers=headers)
    assert result["session"]["token"] == signed["response"]["token"]
    assert result["user"]["email"] == "ada@example.com"


@pytest.mark.parametrize("name,kwargs", [
    ("get_session", {}),
    ("sign_out", {}),
    ("list_sessions", {}),
    ("revoke_session", {"body": {"token": "x"}}),
    ("revoke_sessions", {}),
    ("revoke_other_sessions", {}),
])
def test_headers_required_endpoints_raise_without_headers(db, name, kwargs):
    with pytest.raises(APIError) as caught:
        getattr(auth.api, name)(**kwargs)
    assert caught.value.status_code == 400
    assert caught.value.status == "BAD_REQUEST"
    assert caught.value.code == "VALIDATION_ERROR"
    assert caught.value.message == "Headers is required"


def test_headers_required_as_response_is_a_400_response(db):
    response = auth.api.get_session(as_response=True)
    assert response.status_code == 400
    assert json.loads(response.content) == {"message": "Headers is required", "code": "VALIDATION_ERROR",
                                            "status": 400}


def test_the_same_call_over_http_and_in_process_gives_the_same_body(signed_in):
    over_http = signed_in.api_get("/get-session").json()
    cookie = f"auth.session_token={signed_in.cookies['auth.session_token'].value}"
    in_process = auth.api.get_session(headers={"cookie": cookie})
    assert in_process == over_http


def test_an_error_over_http_and_in_process_gives_the_same_body(api, db):
    over_http = api.api_post("/sign-in/email", {"email": "nobody@example.com", "password": "x"})
    in_process = auth.api.sign_in_email(body={"email": "nobody@example.com", "password": "x"},
                                        as_response=True)
    assert in_process.content == over_http.content
    assert in_process.status_code == over_http.status_code


def test_sign_out_in_process_ends_the_session(user):
    signed = auth.api.sign_in_email(body=CREDENTIALS, return_headers=True)
    headers = {"cookie": cookie_header(signed["headers"].get_list("set-cookie"))}
    result = auth.api.sign_out(headers=headers, return_headers=True)
    assert result["response"] == {"success": True}
    assert "auth.session_token=;" in result["headers"].get("set-cookie")
    assert not Session.objects.filter(token=signed["response"]["token"]).exists()


def test_in_process_calls_skip_the_origin_check(user):
    signed = auth.api.sign_in_email(body=CREDENTIALS, return_headers=True)
    headers = {"cookie": cookie_header(signed["headers"].get_list("set-cookie")),
               "origin": "https://evil.com"}
    assert auth.api.revoke_other_sessions(headers=headers) == {"status": True}


def test_in_process_login_csrf_runs_only_with_a_real_request(user):
    request = RequestFactory().post("/api/auth/sign-in/email", HTTP_ORIGIN="https://evil.com")
    with pytest.raises(APIError) as caught:
        auth.api.sign_in_email(body=CREDENTIALS, request=request)
    assert caught.value.code == "INVALID_ORIGIN"
    assert auth.api.sign_in_email(body=CREDENTIALS, headers={"origin": "https://evil.com"})["token"]


def test_a_real_request_gives_the_session_its_ip_and_user_agent(user):
    request = RequestFactory().post("/", REMOTE_ADDR="10.9.8.7", HTTP_USER_AGENT="agent/1")
    token = auth.api.sign_in_email(body=CREDENTIALS, request=request)["token"]
    session = Session.objects.get(token=token)
    assert (session.ip_address, session.user_agent) == ("10.9.8.7", "agent/1")


def test_without_a_request_the_ip_is_empty_and_the_user_agent_comes_from_headers(user):
    token = auth.api.sign_in_email(body=CREDENTIALS, headers={"user-agent": "server/1"})["token"]
    session = Session.objects.get(token=token)
    assert (session.ip_address, session.user_agent) == ("", "server/1")


def test_a_redirect_raises_found_with_a_location(db):
    with pytest.raises(APIError) as caught:
        auth.api.error(query={"error": "access_denied"})
    assert caught.value.status == "FOUND"
    assert caught.value.status_code == 302
    assert caught.value.headers.get("location") == "/?error=access_denied"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        auth.api.no_such_endpoint  # noqa: B018


def test_every_core_endpoint_has_its_better_auth_name():
    names = set(dir(auth.api))
    assert {"ok", "error", "sign_up_email", "sign_in_email", "sign_out", "get_session", "list_sessions",
            "revoke_session", "revoke_sessions", "revoke_other_sessions", "update_session"} <= names


def test_the_ok_endpoint_in_process(db):
    assert auth.api.ok() == {"ok": True}


def test_in_process_body_is_validated_like_http(db):
    with pytest.raises(APIError) as caught:
        auth.api.sign_in_email(body=[1, 2])
    assert caught.value.message == "[body] Invalid input: expected object, received array"
