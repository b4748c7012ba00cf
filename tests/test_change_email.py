"""POST /change-email (core.md §4.13, §7.1, §7.2)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from authservice import auth, signals, users
from authservice.errors import APIError
from authservice.flows import verification
from tests.conftest import ORIGIN, PASSWORD, error_of

NEW = "grace@example.com"


def cookie_header(client):
    return "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())


def mailed_token(message):
    return re.search(r"[?&]token=([^&\s]+)", message.body).group(1)


def reload(user):
    return get_user_model().objects.get(pk=user.pk)


@pytest.fixture
def verified(signed_in):
    users.update(signed_in.user, email_verified=True)
    return signed_in


# --- guards and input ----------------------------------------------------------------------------
def test_without_a_session_is_unauthorized(api, user):
    response = api.api_post("/change-email", {"newEmail": NEW})
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHORIZED"


def test_a_missing_new_email_is_a_validation_error(signed_in):
    response = signed_in.api_post("/change-email", {})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "VALIDATION_ERROR"
    assert body["message"] == "[body.newEmail] Invalid input: expected string, received undefined"


def test_a_malformed_new_email_is_a_validation_error(signed_in):
    response = signed_in.api_post("/change-email", {"newEmail": "not-an-email"})
    assert response.status_code == 400
    assert error_of(response)["message"] == "[body.newEmail] Invalid email address"


def test_validation_comes_before_the_session_check(api, user):
    response = api.api_post("/change-email", {"newEmail": 5})
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"


def test_an_untrusted_callback_url_is_forbidden(signed_in):
    response = signed_in.api_post("/change-email", {"newEmail": NEW, "callbackURL": "https://evil.com/x"})
    assert response.status_code == 403
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"
    assert mail.outbox == []


# --- refusals ------------------------------------------------------------------------------------
def test_disabled_change_email_is_refused(signed_in, configure):
    configure(change_email={"enabled": False})
    response = signed_in.api_post("/change-email", {"newEmail": NEW})
    assert response.status_code == 400
    body = error_of(response)
    assert body == {"message": "Change email is disabled", "code": "CHANGE_EMAIL_DISABLED", "status": 400}


def test_the_current_address_in_any_case_is_the_same(signed_in):
    response = signed_in.api_post("/change-email", {"newEmail": "ADA@Example.com"})
    assert response.status_code == 400
    assert error_of(response) == {"message": "Email is the same", "code": "EMAIL_IS_THE_SAME",
                                  "status": 400}


def test_no_usable_flow_is_verification_email_not_enabled(signed_in, configure):
    configure(email_verification={"enabled": False})
    response = signed_in.api_post("/change-email", {"newEmail": NEW})
    assert response.status_code == 400
    assert error_of(response) == {"message": "Verification email isn't enabled",
                                  "code": "VERIFICATION_EMAIL_NOT_ENABLED", "status": 400}


def test_no_usable_flow_is_reported_even_for_a_taken_address(signed_in, make_user, configure):
    make_user(email=NEW)
    configure(email_verification={"enabled": False})
    response = signed_in.api_post("/change-email", {"newEmail": NEW})
    assert error_of(response)["code"] == "VERIFICATION_EMAIL_NOT_ENABLED"


def test_an_address_owned_by_another_user_answers_ok_and_does_nothing(signed_in, make_user):
    other = make_user(email=NEW, name="Grace")
    response = signed_in.api_post("/change-email", {"newEmail": NEW})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    assert mail.outbox == []
    assert reload(signed_in.user).email == "ada@example.com"
    assert reload(other).email == NEW


def test_a_taken_and_a_free_address_get_the_same_headers(signed_in, make_user):
    make_user(email=NEW, name="Grace")
    taken = signed_in.api_post("/change-email", {"newEmail": NEW})
    free = signed_in.api_post("/change-email", {"newEmail": "free@example.com"})
    assert sorted(name for name, _ in taken.items()) == sorted(name for name, _ in free.items())
    assert sorted(taken.cookies) == sorted(free.cookies)


def test_a_taken_address_in_flow_a_changes_nothing(signed_in, make_user, configure):
    make_user(email=NEW)
    configure(change_email={"update_email_without_verification": True})
    response = signed_in.api_post("/change-email", {"newEmail": NEW})
    assert response.json() == {"status": True}
    assert reload(signed_in.user).email == "ada@example.com"
    assert mail.outbox == []


def test_a_taken_address_in_flow_a_sets_the_cookie_a_free_one_sets(signed_in, make_user, configure):
    # The same headers for a taken and a free address (I7): the session cookie is set either way.
    make_user(email=NEW)
    configure(change_email={"update_email_without_verification": True})
    response = signed_in.api_post("/change-email", {"newEmail": NEW})
    assert "auth.session_token" in response.cookies


# --- flow (c): verify the new address (reference configuration) -----------------------------------
def test_flow_c_mails_a_change_verification_link_to_the_new_address(signed_in):
    response = signed_in.api_post("/change-email", {"newEmail": NEW, "callbackURL": "/settings"})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    [message] = mail.outbox
    assert message.to == [NEW]
    assert message.subject == "Confirm your new email address"
    token = mailed_token(message)
    assert f"{ORIGIN}/api/auth/verify-email?token={token}&callbackURL=%2Fsettings" in message.body
    payload = verification.read_token(token)
    assert payload["email"] == "ada@example.com"
    assert payload["updateTo"] == NEW
    assert payload["requestType"] == "change-email-verification"


def test_flow_c_changes_nothing_until_the_link_is_followed(signed_in):
    signed_in.api_post("/change-email", {"newEmail": NEW})
    user = reload(signed_in.user)
    assert user.email == "ada@example.com"


def test_the_new_address_is_lower_cased(signed_in):
    signed_in.api_post("/change-email", {"newEmail": "Grace@Example.COM"})
    [message] = mail.outbox
    assert message.to == [NEW]
    assert verification.read_token(mailed_token(message))["updateTo"] == NEW


def test_the_link_defaults_its_callback_url_to_the_root(signed_in):
    signed_in.api_post("/change-email", {"newEmail": NEW})
    token = mailed_token(mail.outbox[0])
    assert re.search(rf"verify-email\?token={re.escape(token)}&callbackURL=%2F(\s|$)", mail.outbox[0].body)


def test_a_verified_user_without_confirmation_setting_uses_flow_c(verified):
    verified.api_post("/change-email", {"newEmail": NEW})
    [message] = mail.outbox
    assert message.to == [NEW]
    assert verification.read_token(mailed_token(message))["requestType"] == "change-email-verification"


def test_following_the_flow_c_link_moves_the_address(signed_in):
    signed_in.api_post("/change-email", {"newEmail": NEW})
    response = signed_in.api_get("/verify-email", {"token": mailed_token(mail.outbox[0])})
    assert response.status_code == 200
    user = reload(signed_in.user)
    assert (user.email, users.is_email_verified(user)) == (NEW, True)


# --- flow (b): approve from the old address ------------------------------------------------------
def test_flow_b_mails_a_confirmation_to_the_old_address(verified, configure):
    configure(change_email={"send_confirmation_to_old_email": True})
    response = verified.api_post("/change-email", {"newEmail": NEW, "callbackURL": "/settings"})
    assert response.json() == {"status": True}
    [message] = mail.outbox
    assert message.to == ["ada@example.com"]
    assert message.subject == "Approve a request on your account"
    payload = verification.read_token(mailed_token(message))
    assert payload == {**payload, "email": "ada@example.com", "updateTo": NEW,
                       "requestType": "change-email-confirmation"}
    assert reload(verified.user).email == "ada@example.com"


def test_approving_flow_b_mails_the_new_address(verified, configure):
    configure(change_email={"send_confirmation_to_old_email": True})
    verified.api_post("/change-email", {"newEmail": NEW})
    verified.api_get("/verify-email", {"token": mailed_token(mail.outbox[0])})
    assert [m.to for m in mail.outbox] == [["ada@example.com"], [NEW]]
    assert verification.read_token(mailed_token(mail.outbox[1]))["requestType"] == \
        "change-email-verification"
    assert reload(verified.user).email == "ada@example.com"


def test_flow_b_needs_a_verified_address(signed_in, configure):
    configure(change_email={"send_confirmation_to_old_email": True})
    signed_in.api_post("/change-email", {"newEmail": NEW})
    [message] = mail.outbox
    assert message.to == [NEW]
    assert verification.read_token(mailed_token(message))["requestType"] == "change-email-verification"


# --- a user with a second factor: always flow (b), from a fresh session -------------------------
@pytest.fixture
def with_second_factor(signed_in):
    assert signed_in.api_post("/two-factor/enable", {"password": PASSWORD, "method": "otp"}).status_code == 200
    return signed_in


def test_a_user_with_a_second_factor_approves_from_the_current_address_whatever_the_setting(with_second_factor):
    # Their mailbox resets the password: the new one alone must not take it (attack 17c).
    with_second_factor.api_post("/change-email", {"newEmail": NEW})
    [message] = mail.outbox
    assert message.to == ["ada@example.com"]
    assert verification.read_token(mailed_token(message))["requestType"] == "change-email-confirmation"


def test_a_user_with_a_second_factor_is_never_moved_at_once(with_second_factor, configure):
    configure(change_email={"update_email_without_verification": True})
    with_second_factor.api_post("/change-email", {"newEmail": NEW})
    assert reload(with_second_factor.user).email == "ada@example.com"
    assert [m.to for m in mail.outbox] == [["ada@example.com"]]


def test_a_user_with_a_second_factor_needs_a_fresh_session(with_second_factor):
    from datetime import timedelta

    from django.utils import timezone

    from authservice.models import Session

    Session.objects.filter(user=with_second_factor.user).update(created_at=timezone.now() - timedelta(days=2))
    response = with_second_factor.api_post("/change-email", {"newEmail": NEW})
    assert error_of(response)["code"] == "SESSION_NOT_FRESH"
    assert mail.outbox == []


# --- flow (a): an unverified address is replaced at once -----------------------------------------
def test_flow_a_updates_the_address_at_once(signed_in, configure):
    configure(change_email={"update_email_without_verification": True})
    response = signed_in.api_post("/change-email", {"newEmail": NEW})
    assert response.json() == {"status": True}
    user = reload(signed_in.user)
    assert user.email == NEW
    assert users.is_email_verified(user) is False


def test_flow_a_resends_the_session_cookie(signed_in, configure):
    configure(change_email={"update_email_without_verification": True})
    response = signed_in.api_post("/change-email", {"newEmail": NEW})
    cookie = response.cookies["auth.session_token"]
    assert cookie.value.startswith(signed_in.token + ".")
    assert cookie["max-age"] == 604800


def test_flow_a_mails_a_plain_verification_link_to_the_new_address(signed_in, configure):
    configure(change_email={"update_email_without_verification": True})
    signed_in.api_post("/change-email", {"newEmail": NEW, "callbackURL": "/welcome"})
    [message] = mail.outbox
    assert message.to == [NEW]
    assert message.subject == "Verify your email address"
    token = mailed_token(message)
    assert f"/api/auth/verify-email?token={token}&callbackURL=%2Fwelcome" in message.body
    payload = verification.read_token(token)
    assert payload["email"] == NEW
    assert "updateTo" not in payload and "requestType" not in payload


def test_flow_a_sends_the_email_changed_signal(signed_in, configure):
    configure(change_email={"update_email_without_verification": True})
    heard = []

    def receiver(sender, user, old_email, new_email, **kwargs):
        heard.append((user.pk, old_email, new_email))

    signals.email_changed.connect(receiver)
    try:
        signed_in.api_post("/change-email", {"newEmail": NEW})
    finally:
        signals.email_changed.disconnect(receiver)
    assert heard == [(signed_in.user.pk, "ada@example.com", NEW)]


def test_flow_a_works_without_verification_mail(signed_in, configure):
    configure(change_email={"update_email_without_verification": True},
              email_verification={"enabled": False})
    response = signed_in.api_post("/change-email", {"newEmail": NEW})
    assert response.json() == {"status": True}
    assert reload(signed_in.user).email == NEW
    assert mail.outbox == []


def test_flow_a_is_not_taken_for_a_verified_address(verified, configure):
    configure(change_email={"update_email_without_verification": True})
    verified.api_post("/change-email", {"newEmail": NEW})
    assert reload(verified.user).email == "ada@example.com"
    assert verification.read_token(mailed_token(mail.outbox[0]))["requestType"] == \
        "change-email-verification"


def test_the_new_address_signs_in_after_flow_a(signed_in, configure):
    configure(change_email={"update_email_without_verification": True})
    signed_in.api_post("/change-email", {"newEmail": NEW})
    response = signed_in.api_post("/sign-in/email", {"email": NEW, "password": "correct horse battery"})
    assert response.status_code == 200


# --- in-process ----------------------------------------------------------------------------------
def test_in_process_change_email_sends_the_link(signed_in):
    result = auth.api.change_email(body={"newEmail": NEW}, headers={"cookie": cookie_header(signed_in)})
    assert result == {"status": True}
    assert mail.outbox[0].to == [NEW]


def test_in_process_without_a_session_raises_unauthorized(db):
    with pytest.raises(APIError) as caught:
        auth.api.change_email(body={"newEmail": NEW}, headers={})
    assert caught.value.status == "UNAUTHORIZED"
    assert caught.value.status_code == 401


def test_in_process_refusal_carries_the_code(signed_in):
    with pytest.raises(APIError) as caught:
        auth.api.change_email(body={"newEmail": "ada@example.com"},
                              headers={"cookie": cookie_header(signed_in)})
    assert (caught.value.code, caught.value.status) == ("EMAIL_IS_THE_SAME", "BAD_REQUEST")
