"""POST /change-password and POST /verify-password (core.md §4.12, §4.18, §9)."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from authservice import auth, cookies, signals, tokens
from authservice.errors import APIError
from authservice.models import Account, Session
from tests.conftest import PASSWORD, ApiClient, error_of

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a brand new password"


def change(api, **body):
    body.setdefault("currentPassword", PASSWORD)
    body.setdefault("newPassword", NEW_PASSWORD)
    return api.api_post("/change-password", body)


def signs_in(email, password):
    response = ApiClient().api_post("/sign-in/email", {"email": email, "password": password})
    return response.status_code == 200


def client_with_session(user):
    """A client holding a session made directly in storage (for users who cannot sign in)."""
    token = tokens.session_token()
    Session.objects.create(token=token, user=user, expires_at=timezone.now() + timedelta(days=1))
    client = ApiClient()
    client.cookies["auth.session_token"] = cookies.signed_value(token)
    return client


def cookie_header(api):
    return f"auth.session_token={api.cookies['auth.session_token'].value}"


def second_session(user):
    client = ApiClient()
    client.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD})
    return client


# --- POST /change-password ----------------------------------------------------------------------
def test_change_answers_a_null_token_and_the_user(signed_in):
    response = change(signed_in)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"token", "user"}
    assert body["token"] is None
    assert body["user"]["id"] == str(signed_in.user.pk)
    assert "password" not in body["user"]


def test_change_sets_the_new_password(signed_in):
    change(signed_in)
    assert signs_in(signed_in.user.email, NEW_PASSWORD)
    assert not signs_in(signed_in.user.email, PASSWORD)


def test_change_keeps_every_session(signed_in):
    other = second_session(signed_in.user)
    response = change(signed_in)
    assert "auth.session_token" not in response.cookies
    assert signed_in.api_get("/get-session").json() is not None
    assert other.api_get("/get-session").json() is not None


def test_change_with_revoke_other_sessions_revokes_all_and_starts_a_new_one(signed_in):
    other = second_session(signed_in.user)
    response = change(signed_in, revokeOtherSessions=True)
    assert response.status_code == 200
    new_token = response.json()["token"]
    assert new_token and new_token != signed_in.token
    assert list(Session.objects.filter(user=signed_in.user).values_list("token", flat=True)) == [new_token]
    assert other.api_get("/get-session").json() is None


def test_the_session_made_by_revoke_keeps_the_callers_sign_in_time(signed_in):
    # A replacement proves nothing anew: it must not turn a stale session into a fresh one.
    signed_in_at = timezone.now() - timedelta(days=2)
    Session.objects.filter(user=signed_in.user).update(created_at=signed_in_at)
    new_token = change(signed_in, revokeOtherSessions=True).json()["token"]
    assert Session.objects.get(token=new_token).created_at == signed_in_at


def test_change_with_revoke_other_sessions_sets_the_new_cookie(signed_in):
    response = change(signed_in, revokeOtherSessions=True)
    cookie = response.cookies["auth.session_token"]
    assert cookie.value.startswith(response.json()["token"] + ".")
    assert cookie["max-age"] == 604800
    assert signed_in.api_get("/get-session").json()["session"]["token"] == response.json()["token"]


def test_change_with_revoke_keeps_a_dont_remember_choice(user):
    api = ApiClient()
    api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD, "rememberMe": False})
    response = change(api, revokeOtherSessions=True)
    assert response.cookies["auth.session_token"]["max-age"] == ""


def test_change_with_revoke_other_sessions_false_keeps_sessions(signed_in):
    response = change(signed_in, revokeOtherSessions=False)
    assert response.json()["token"] is None
    assert Session.objects.filter(token=signed_in.token).exists()


def test_change_sends_password_changed(signed_in):
    seen = []

    def handler(sender, user, **kwargs):
        seen.append(user.pk)

    signals.password_changed.connect(handler)
    try:
        change(signed_in)
    finally:
        signals.password_changed.disconnect(handler)
    assert seen == [signed_in.user.pk]


def test_change_with_revoke_sends_session_revoked(signed_in):
    seen = []

    def handler(sender, user, session, **kwargs):
        seen.append(session.token)

    signals.session_revoked.connect(handler)
    try:
        change(signed_in, revokeOtherSessions=True)
    finally:
        signals.session_revoked.disconnect(handler)
    assert seen == [signed_in.token]


def test_change_accepts_eight_and_128_characters(signed_in):
    assert change(signed_in, newPassword="x" * 8).status_code == 200
    assert change(signed_in, currentPassword="x" * 8, newPassword="y" * 128).status_code == 200


def test_change_in_process(signed_in):
    result = auth.api.change_password(
        body={"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD},
        headers={"cookie": cookie_header(signed_in)},
    )
    assert result["token"] is None
    assert result["user"]["email"] == signed_in.user.email


# --- POST /change-password: errors ----------------------------------------------------------------
def test_change_validates_the_body_before_the_session(api, db):
    response = api.api_post("/change-password", {})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "VALIDATION_ERROR"
    assert "[body.newPassword]" in body["message"]
    assert "[body.currentPassword]" in body["message"]


def test_change_with_a_non_boolean_revoke_flag_is_a_validation_error(signed_in):
    response = change(signed_in, revokeOtherSessions="yes")
    assert response.status_code == 400
    assert error_of(response)["message"] == (
        "[body.revokeOtherSessions] Invalid input: expected boolean, received string")


def test_change_without_a_session_is_unauthorized(api, user):
    response = change(api)
    assert response.status_code == 401
    body = error_of(response)
    assert body["code"] == "UNAUTHORIZED"
    assert body["message"] == "Unauthorized"


def test_change_to_a_seven_character_password_is_too_short(signed_in):
    response = change(signed_in, newPassword="x" * 7)
    assert response.status_code == 400
    assert error_of(response)["code"] == "PASSWORD_TOO_SHORT"


def test_change_to_a_129_character_password_is_too_long(signed_in):
    response = change(signed_in, newPassword="x" * 129)
    assert response.status_code == 400
    assert error_of(response)["code"] == "PASSWORD_TOO_LONG"


def test_length_is_checked_before_the_current_password(signed_in):
    response = change(signed_in, currentPassword="wrong password", newPassword="short")
    assert error_of(response)["code"] == "PASSWORD_TOO_SHORT"


def test_change_without_a_password_is_credential_account_not_found(make_user):
    user = make_user()
    Account.objects.filter(user=user).delete()
    get_user_model().objects.filter(pk=user.pk).update(password="!")
    response = change(client_with_session(user))
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "CREDENTIAL_ACCOUNT_NOT_FOUND"
    assert body["message"] == "Credential account not found"


def test_change_with_a_wrong_current_password_is_invalid_password(signed_in):
    response = change(signed_in, currentPassword="not my password")
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "INVALID_PASSWORD"
    assert body["message"] == "Invalid password"
    assert signs_in(signed_in.user.email, PASSWORD)


def test_change_with_a_wrong_current_password_revokes_nothing(signed_in):
    change(signed_in, currentPassword="not my password", revokeOtherSessions=True)
    assert Session.objects.filter(token=signed_in.token).exists()


def test_change_in_process_raises_invalid_password_as_bad_request(signed_in):
    with pytest.raises(APIError) as raised:
        auth.api.change_password(body={"currentPassword": "nope", "newPassword": NEW_PASSWORD},
                                 headers={"cookie": cookie_header(signed_in)})
    assert raised.value.status == "BAD_REQUEST"
    assert raised.value.code == "INVALID_PASSWORD"


def test_change_in_process_without_a_session_raises_unauthorized(db):
    with pytest.raises(APIError) as raised:
        auth.api.change_password(body={"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD},
                                 headers={})
    assert raised.value.status == "UNAUTHORIZED"


# --- POST /verify-password ------------------------------------------------------------------------
def test_verify_password_accepts_the_right_password(signed_in):
    response = signed_in.api_post("/verify-password", {"password": PASSWORD})
    assert response.status_code == 200
    assert response.json() == {"status": True}


def test_verify_password_with_a_wrong_password_is_invalid_password(signed_in):
    response = signed_in.api_post("/verify-password", {"password": "not my password"})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "INVALID_PASSWORD"
    assert body["message"] == "Invalid password"


def test_verify_password_does_not_check_the_length_policy(signed_in):
    response = signed_in.api_post("/verify-password", {"password": "x"})
    assert error_of(response)["code"] == "INVALID_PASSWORD"


def test_verify_password_without_a_password_set_is_invalid_password(make_user):
    user = make_user()
    Account.objects.filter(user=user).delete()
    get_user_model().objects.filter(pk=user.pk).update(password="!")
    response = client_with_session(user).api_post("/verify-password", {"password": PASSWORD})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_PASSWORD"


def test_verify_password_without_a_session_is_unauthorized(api, user):
    response = api.api_post("/verify-password", {"password": PASSWORD})
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHORIZED"


def test_verify_password_without_a_password_is_a_validation_error(signed_in):
    response = signed_in.api_post("/verify-password", {})
    assert response.status_code == 400
    assert error_of(response)["message"] == (
        "[body.password] Invalid input: expected string, received undefined")


def test_verify_password_in_process(signed_in):
    headers = {"cookie": cookie_header(signed_in)}
    assert auth.api.verify_password(body={"password": PASSWORD}, headers=headers) == {"status": True}
    with pytest.raises(APIError) as raised:
        auth.api.verify_password(body={"password": "nope"}, headers=headers)
    assert raised.value.status == "BAD_REQUEST"
