"""POST /delete-user and GET /delete-user/callback (core.md §4.15, §6.4, §7.1, §7.2)."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone

from authservice import auth, signals, users
from authservice.errors import APIError
from authservice.models import Account, Session, Verification
from tests.conftest import ORIGIN, PASSWORD, ApiClient, error_of

SESSION_COOKIES = ("auth.session_token", "auth.session_data", "auth.dont_remember")


def cookie_header(client):
    return "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())


def user_exists(user):
    return get_user_model().objects.filter(pk=user.pk).exists()


def make_stale(client):
    Session.objects.filter(token=client.token).update(created_at=timezone.now() - timedelta(days=2))


def mailed_token(message):
    return re.search(r"[?&]token=([0-9a-z]+)", message.body).group(1)


@pytest.fixture
def with_mail(configure):
    configure(delete_user={"send_delete_verification": True})


@pytest.fixture
def delete_token(signed_in, with_mail):
    """A deletion token mailed to the signed-in user."""
    signed_in.api_post("/delete-user", {})
    return mailed_token(mail.outbox[-1])


# --- immediate deletion --------------------------------------------------------------------------
def test_a_fresh_session_deletes_the_user(signed_in):
    response = signed_in.api_post("/delete-user", {})
    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "User deleted"}
    assert not user_exists(signed_in.user)


def test_deletion_removes_every_session_and_account(signed_in, make_user):
    other_client = ApiClient()
    other_client.api_post("/sign-in/email", {"email": signed_in.user.email, "password": PASSWORD})
    bystander = make_user(email="grace@example.com")
    signed_in.api_post("/delete-user", {})
    assert not Session.objects.filter(user_id=signed_in.user.pk).exists()
    assert not Account.objects.filter(user_id=signed_in.user.pk).exists()
    assert Account.objects.filter(user=bystander).exists()
    assert other_client.api_get("/get-session").json() is None


def test_deletion_clears_the_session_cookies(signed_in):
    response = signed_in.api_post("/delete-user", {})
    for name in SESSION_COOKIES:
        assert response.cookies[name].value == ""
        assert response.cookies[name]["max-age"] == 0


def test_the_address_is_free_for_a_new_sign_up(signed_in):
    signed_in.api_post("/delete-user", {})
    response = ApiClient().api_post("/sign-up/email", {"name": "Ada 2", "email": "ada@example.com",
                                                       "password": PASSWORD})
    assert response.status_code == 200


def test_deletion_sends_user_deleted_after_commit(signed_in, django_capture_on_commit_callbacks):
    heard = []

    def receiver(sender, user_id, email, **kwargs):
        heard.append((user_id, email, get_user_model().objects.filter(pk=user_id).exists()))

    signals.user_deleted.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            signed_in.api_post("/delete-user", {})
        assert heard == []
        for callback in callbacks:
            callback()
    finally:
        signals.user_deleted.disconnect(receiver)
    assert heard == [(signed_in.user.pk, "ada@example.com", False)]


def test_a_body_is_required(signed_in):
    response = signed_in.api_post("/delete-user")
    assert response.status_code == 400
    assert error_of(response)["message"] == "[body] Invalid input: expected object, received undefined"
    assert user_exists(signed_in.user)


def test_a_non_string_password_is_a_validation_error(signed_in):
    response = signed_in.api_post("/delete-user", {"password": 12345678})
    assert error_of(response)["message"] == "[body.password] Invalid input: expected string, received number"
    assert user_exists(signed_in.user)


# --- the checks, in order ------------------------------------------------------------------------
def test_without_a_session_is_unauthorized(api, user):
    response = api.api_post("/delete-user", {})
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHORIZED"
    assert user_exists(user)


def test_disabled_deletion_is_not_found(signed_in, configure):
    configure(delete_user={"enabled": False})
    response = signed_in.api_post("/delete-user", {"password": "wrong"})
    assert response.status_code == 404
    assert error_of(response) == {"message": "Not found", "code": "NOT_FOUND", "status": 404}
    assert user_exists(signed_in.user)


def test_a_wrong_password_is_invalid_password(signed_in):
    response = signed_in.api_post("/delete-user", {"password": "not the password"})
    assert response.status_code == 400
    assert error_of(response) == {"message": "Invalid password", "code": "INVALID_PASSWORD", "status": 400}
    assert user_exists(signed_in.user)


@pytest.mark.skipif(not users.layout().own, reason="a project's own model: its usable password is the credential")
def test_a_password_without_a_credential_account_is_refused(signed_in):
    Account.objects.filter(user=signed_in.user).delete()
    response = signed_in.api_post("/delete-user", {"password": PASSWORD})
    assert response.status_code == 400
    assert error_of(response) == {"message": "Credential account not found",
                                  "code": "CREDENTIAL_ACCOUNT_NOT_FOUND", "status": 400}
    assert user_exists(signed_in.user)


def test_a_password_without_a_password_set_is_refused(signed_in):
    user = signed_in.user
    user.set_unusable_password()
    user.save()
    response = signed_in.api_post("/delete-user", {"password": PASSWORD})
    assert error_of(response)["code"] == "CREDENTIAL_ACCOUNT_NOT_FOUND"


def test_the_password_is_checked_before_the_token(signed_in, delete_token):
    response = signed_in.api_post("/delete-user", {"password": "wrong", "token": delete_token})
    assert error_of(response)["code"] == "INVALID_PASSWORD"
    assert Verification.objects.filter(identifier=f"delete-account-{delete_token}").exists()


def test_a_stale_session_without_password_is_session_expired(signed_in):
    make_stale(signed_in)
    response = signed_in.api_post("/delete-user", {})
    assert response.status_code == 400
    assert error_of(response) == {
        "message": "Session expired. Re-authenticate to perform this action.",
        "code": "SESSION_EXPIRED", "status": 400,
    }
    assert user_exists(signed_in.user)


def test_an_empty_password_counts_as_none(signed_in):
    make_stale(signed_in)
    response = signed_in.api_post("/delete-user", {"password": ""})
    assert error_of(response)["code"] == "SESSION_EXPIRED"


def test_the_right_password_deletes_on_a_stale_session(signed_in):
    make_stale(signed_in)
    response = signed_in.api_post("/delete-user", {"password": PASSWORD})
    assert response.json() == {"success": True, "message": "User deleted"}
    assert not user_exists(signed_in.user)


def test_fresh_age_zero_switches_the_freshness_check_off(signed_in, configure):
    configure(session={"fresh_age": 0})
    make_stale(signed_in)
    response = signed_in.api_post("/delete-user", {})
    assert response.json()["message"] == "User deleted"


def test_an_untrusted_callback_url_is_forbidden(signed_in):
    response = signed_in.api_post("/delete-user", {"callbackURL": "https://evil.com/bye"})
    assert response.status_code == 403
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"
    assert user_exists(signed_in.user)


# --- deletion by mail ----------------------------------------------------------------------------
def test_with_deletion_mail_a_link_is_sent_instead(signed_in, with_mail):
    response = signed_in.api_post("/delete-user", {"callbackURL": "/goodbye"})
    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "Verification email sent"}
    assert user_exists(signed_in.user)
    [message] = mail.outbox
    assert message.to == ["ada@example.com"]
    assert message.subject == "Confirm the deletion of your account"
    token = mailed_token(message)
    assert f"{ORIGIN}/api/auth/delete-user/callback?token={token}&callbackURL=%2Fgoodbye" in message.body


def test_the_delete_token_is_32_lower_case_alphanumerics(delete_token):
    assert re.fullmatch(r"[0-9a-z]{32}", delete_token)


def test_the_delete_token_is_a_verification_row_of_the_user(signed_in, delete_token):
    row = Verification.objects.get(identifier=f"delete-account-{delete_token}")
    assert row.value == str(signed_in.user.pk)
    lifetime = (row.expires_at - timezone.now()).total_seconds()
    assert 86400 - 60 < lifetime <= 86400


def test_the_token_lifetime_is_a_setting(signed_in, configure):
    configure(delete_user={"send_delete_verification": True, "delete_token_expires_in": 600})
    signed_in.api_post("/delete-user", {})
    row = Verification.objects.get(identifier__startswith="delete-account-")
    assert 540 < (row.expires_at - timezone.now()).total_seconds() <= 600


def test_the_link_defaults_its_callback_url_to_the_root(signed_in, with_mail):
    signed_in.api_post("/delete-user", {})
    assert re.search(r"delete-user/callback\?token=[0-9a-z]{32}&callbackURL=%2F(\s|$)", mail.outbox[0].body)


def test_the_mail_is_sent_even_from_a_stale_session(signed_in, with_mail):
    make_stale(signed_in)
    response = signed_in.api_post("/delete-user", {})
    assert response.json()["message"] == "Verification email sent"


def test_a_token_in_the_body_deletes_at_once(signed_in, delete_token):
    response = signed_in.api_post("/delete-user", {"token": delete_token})
    assert response.json() == {"success": True, "message": "User deleted"}
    assert not user_exists(signed_in.user)
    assert not Verification.objects.filter(identifier=f"delete-account-{delete_token}").exists()


def test_an_unknown_token_in_the_body_is_invalid(signed_in, with_mail):
    response = signed_in.api_post("/delete-user", {"token": "0" * 32})
    assert response.status_code == 404
    assert error_of(response) == {"message": "Invalid token", "code": "INVALID_TOKEN", "status": 404}
    assert user_exists(signed_in.user)


# --- GET /delete-user/callback -------------------------------------------------------------------
def test_the_link_deletes_the_signed_in_owner(signed_in, delete_token):
    response = signed_in.api_get("/delete-user/callback", {"token": delete_token})
    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "User deleted"}
    assert not user_exists(signed_in.user)
    assert response.cookies["auth.session_token"]["max-age"] == 0


def test_the_link_redirects_to_its_callback_url(signed_in, delete_token):
    response = signed_in.api_get("/delete-user/callback", {"token": delete_token, "callbackURL": "/goodbye"})
    assert response.status_code == 302
    assert response["Location"] == "/goodbye"
    assert not user_exists(signed_in.user)


def test_the_link_is_single_use(signed_in, delete_token):
    signed_in.api_get("/delete-user/callback", {"token": delete_token})
    assert not Verification.objects.filter(identifier=f"delete-account-{delete_token}").exists()


def test_the_link_with_an_untrusted_callback_url_is_forbidden(signed_in, delete_token):
    response = signed_in.api_get("/delete-user/callback",
                                 {"token": delete_token, "callbackURL": "https://evil.com/"})
    assert response.status_code == 403
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"
    assert user_exists(signed_in.user)


def test_the_link_with_a_trusted_absolute_callback_url_redirects(signed_in, delete_token):
    response = signed_in.api_get("/delete-user/callback",
                                 {"token": delete_token, "callbackURL": f"{ORIGIN}/bye"})
    assert response["Location"] == f"{ORIGIN}/bye"


def test_the_link_without_a_token_is_a_validation_error(signed_in):
    response = signed_in.api_get("/delete-user/callback")
    assert response.status_code == 400
    assert error_of(response)["message"] == "[query.token] Invalid input: expected string, received undefined"


def test_the_link_while_deletion_is_disabled_is_not_found(signed_in, delete_token, configure):
    configure(delete_user={"enabled": False})
    response = signed_in.api_get("/delete-user/callback", {"token": delete_token})
    assert response.status_code == 404
    assert error_of(response) == {"message": "Not found", "code": "NOT_FOUND", "status": 404}
    assert user_exists(signed_in.user)


def test_the_link_without_a_session_fails_to_get_user_info(signed_in, delete_token):
    response = ApiClient().api_get("/delete-user/callback", {"token": delete_token})
    assert response.status_code == 404
    assert error_of(response) == {"message": "Failed to get user info", "code": "FAILED_TO_GET_USER_INFO",
                                  "status": 404}
    assert user_exists(signed_in.user)


def test_an_unknown_link_token_is_invalid(signed_in, with_mail):
    response = signed_in.api_get("/delete-user/callback", {"token": "unknown"})
    assert response.status_code == 404
    assert error_of(response)["code"] == "INVALID_TOKEN"


def test_an_expired_link_token_is_invalid(signed_in, delete_token):
    Verification.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = signed_in.api_get("/delete-user/callback", {"token": delete_token})
    assert error_of(response)["code"] == "INVALID_TOKEN"
    assert user_exists(signed_in.user)


def test_another_users_token_is_invalid_and_stays_usable(signed_in, delete_token, make_user):
    make_user(email="mallory@example.com")
    mallory = ApiClient()
    mallory.api_post("/sign-in/email", {"email": "mallory@example.com", "password": PASSWORD})
    response = mallory.api_get("/delete-user/callback", {"token": delete_token})
    assert response.status_code == 404
    assert error_of(response)["code"] == "INVALID_TOKEN"
    assert user_exists(signed_in.user)
    assert signed_in.api_get("/delete-user/callback", {"token": delete_token}).status_code == 200


# --- in-process ----------------------------------------------------------------------------------
def test_in_process_delete_user(signed_in):
    result = auth.api.delete_user(body={}, headers={"cookie": cookie_header(signed_in)}, return_headers=True)
    assert result["response"] == {"success": True, "message": "User deleted"}
    cleared = result["headers"].get_list("set-cookie")
    assert any(line.startswith("auth.session_token=;") and "Max-Age=0" in line for line in cleared)
    assert not user_exists(signed_in.user)


def test_in_process_without_a_session_raises_unauthorized(db):
    with pytest.raises(APIError) as caught:
        auth.api.delete_user(body={}, headers={})
    assert (caught.value.status, caught.value.status_code) == ("UNAUTHORIZED", 401)


def test_in_process_stale_session_raises_session_expired(signed_in):
    make_stale(signed_in)
    with pytest.raises(APIError) as caught:
        auth.api.delete_user(body={}, headers={"cookie": cookie_header(signed_in)})
    assert (caught.value.code, caught.value.status) == ("SESSION_EXPIRED", "BAD_REQUEST")


def test_in_process_callback_with_callback_url_raises_found(signed_in, delete_token):
    with pytest.raises(APIError) as caught:
        auth.api.delete_user_callback(query={"token": delete_token, "callbackURL": "/bye"},
                                      headers={"cookie": cookie_header(signed_in)})
    assert caught.value.status == "FOUND"
    assert caught.value.headers["location"] == "/bye"
    assert not user_exists(signed_in.user)
