"""POST /send-verification-email and GET /verify-email (core.md §4.7, §4.8)."""

import re
import time
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from authservice import auth, signals, users
from authservice.errors import APIError
from authservice.flows import verification
from authservice.flows.verification import make_token
from authservice.models import Session
from tests.conftest import BASE, ORIGIN, error_of

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://\S+")


def link_of(message):
    return LINK.search(message.body).group(0)


def follow(api, url):
    """GET a mailed link through the test client (its path and query, under our origin)."""
    assert url.startswith(ORIGIN + BASE)
    return api.get(url[len(ORIGIN):])


def session_cookie(response):
    return response.cookies.get("auth.session_token")


def reload(user):
    return get_user_model().objects.get(pk=user.pk)


@pytest.fixture
def received():
    """Signals sent during the test, as (signal name, kwargs)."""
    seen = []
    names = ("email_verified", "email_changed", "session_revoked")
    handlers = {}
    for name in names:
        def handler(sender, signal=None, _name=name, **kwargs):
            seen.append((_name, kwargs))
        handlers[name] = handler
        getattr(signals, name).connect(handler)
    yield seen
    for name, handler in handlers.items():
        getattr(signals, name).disconnect(handler)


# --- POST /send-verification-email without a session ----------------------------------------------
def test_anonymous_send_mails_an_unverified_user(api, user):
    response = api.api_post("/send-verification-email", {"email": user.email})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    assert [m.to for m in mail.outbox] == [[user.email]]


def test_anonymous_send_matches_the_address_case_insensitively(api, user):
    api.api_post("/send-verification-email", {"email": user.email.upper()})
    assert [m.to for m in mail.outbox] == [[user.email]]


def test_anonymous_send_to_an_unknown_address_answers_the_same_without_mail(api, db):
    response = api.api_post("/send-verification-email", {"email": "nobody@example.com"})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    assert mail.outbox == []


def test_anonymous_send_answers_known_and_unknown_addresses_with_the_same_headers(api, user):
    known = api.api_post("/send-verification-email", {"email": user.email})
    unknown = api.api_post("/send-verification-email", {"email": "nobody@example.com"})
    assert sorted(known.items()) == sorted(unknown.items())


def test_anonymous_send_to_a_verified_user_answers_the_same_without_mail(api, make_user):
    make_user(email_verified=True)
    response = api.api_post("/send-verification-email", {"email": "ada@example.com"})
    assert response.json() == {"status": True}
    assert mail.outbox == []


def test_anonymous_send_is_not_padded_to_a_fixed_time(api, db):
    # The request only enqueues the mail, the same for every address (tests/security/
    # test_account_enumeration_timing.py), so it no longer sleeps to hide the send.
    started = time.monotonic()
    api.api_post("/send-verification-email", {"email": "nobody@example.com"})
    assert time.monotonic() - started < 0.5


def test_the_mailed_link_carries_the_encoded_callback_url(api, user):
    api.api_post("/send-verification-email", {"email": user.email, "callbackURL": "/welcome?x=1"})
    link = link_of(mail.outbox[0])
    assert link.startswith(f"{ORIGIN}{BASE}/verify-email?token=")
    assert link.endswith("&callbackURL=" + quote("/welcome?x=1", safe="-_.!~*'()"))


def test_the_mailed_link_defaults_the_callback_url_to_the_root(api, user):
    api.api_post("/send-verification-email", {"email": user.email})
    assert link_of(mail.outbox[0]).endswith("&callbackURL=%2F")


# --- POST /send-verification-email with a session -------------------------------------------------
def test_signed_in_send_mails_the_session_user(signed_in):
    response = signed_in.api_post("/send-verification-email", {"email": signed_in.user.email})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    assert [m.to for m in mail.outbox] == [[signed_in.user.email]]


def test_signed_in_send_does_not_wait(signed_in):
    started = time.monotonic()
    signed_in.api_post("/send-verification-email", {"email": signed_in.user.email})
    assert time.monotonic() - started < 0.5


def test_signed_in_send_compares_addresses_case_insensitively(signed_in):
    response = signed_in.api_post("/send-verification-email", {"email": "ADA@Example.com"})
    assert response.status_code == 200


def test_signed_in_send_for_another_address_is_email_mismatch(signed_in):
    response = signed_in.api_post("/send-verification-email", {"email": "eve@example.com"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "EMAIL_MISMATCH"
    assert error_of(response)["message"] == "Email mismatch"
    assert mail.outbox == []


def test_signed_in_send_for_a_verified_user_is_email_already_verified(signed_in):
    users.update(signed_in.user, email_verified=True)
    response = signed_in.api_post("/send-verification-email", {"email": signed_in.user.email})
    assert response.status_code == 400
    assert error_of(response)["code"] == "EMAIL_ALREADY_VERIFIED"
    assert error_of(response)["message"] == "Email is already verified"


def test_send_in_process_raises_email_mismatch_as_bad_request(signed_in):
    cookie = f"auth.session_token={signed_in.cookies['auth.session_token'].value}"
    with pytest.raises(APIError) as raised:
        auth.api.send_verification_email(body={"email": "eve@example.com"}, headers={"cookie": cookie})
    assert raised.value.status == "BAD_REQUEST"
    assert raised.value.code == "EMAIL_MISMATCH"


# --- POST /send-verification-email errors ---------------------------------------------------------
def test_send_without_email_is_a_validation_error(api, db):
    response = api.api_post("/send-verification-email", {})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "VALIDATION_ERROR"
    assert body["message"] == "[body.email] Invalid input: expected string, received undefined"


def test_send_with_a_malformed_email_is_a_validation_error(api, db):
    response = api.api_post("/send-verification-email", {"email": "not-an-email"})
    assert response.status_code == 400
    assert error_of(response)["message"] == "[body.email] Invalid email address"


def test_send_with_an_untrusted_callback_url_is_forbidden(api, user):
    response = api.api_post("/send-verification-email",
                            {"email": user.email, "callbackURL": "https://evil.example/x"})
    assert response.status_code == 403
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"
    assert mail.outbox == []


def test_send_while_verification_mail_is_off_is_not_enabled(api, user, configure):
    configure(email_verification={"enabled": False})
    response = api.api_post("/send-verification-email", {"email": user.email})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "VERIFICATION_EMAIL_NOT_ENABLED"
    assert body["message"] == "Verification email isn't enabled"


# --- the queued mail, when the worker runs it ------------------------------------------------------
def deliver(**overrides):
    task = {"kind": "verify-email", "email": "ada@example.com", "base": ORIGIN + BASE,
            "callback_url": None, "user_id": None, "update_to": None, "request_type": None}
    verification.deliver(**{**task, **overrides})


def test_the_worker_mails_an_unverified_account_found_by_address(user):
    deliver()
    assert [m.to for m in mail.outbox] == [[user.email]]


def test_the_worker_mails_nobody_when_the_account_changed_its_address_meanwhile(user):
    deliver(email="old-address@example.com", user_id=user.pk)
    assert mail.outbox == []


def test_the_worker_mails_nobody_for_a_deactivated_account(make_user):
    make_user(is_active=False)
    deliver()
    assert mail.outbox == []


def test_the_worker_mails_no_change_link_for_a_taken_new_address(user, make_user):
    make_user(email="grace@example.com")
    deliver(kind="change-email-verification", user_id=user.pk, update_to="grace@example.com",
            request_type="change-email-verification")
    assert mail.outbox == []


# --- GET /verify-email: plain tokens --------------------------------------------------------------
def test_verify_marks_the_user_verified(api, user):
    response = api.api_get("/verify-email", {"token": make_token(user.email)})
    assert response.status_code == 200
    assert response.json() == {"status": True, "user": None}
    assert users.is_email_verified(reload(user)) is True


def test_verify_sets_no_cookie_without_auto_sign_in(api, user):
    response = api.api_get("/verify-email", {"token": make_token(user.email)})
    assert session_cookie(response) is None
    assert not Session.objects.filter(user=user).exists()


def test_verify_with_a_callback_url_redirects_there_as_given(api, user):
    response = api.api_get("/verify-email", {"token": make_token(user.email), "callbackURL": "/verified"})
    assert response.status_code == 302
    assert response["Location"] == "/verified"
    assert users.is_email_verified(reload(user)) is True


def test_verify_of_a_verified_user_answers_status_true(api, make_user):
    user = make_user(email_verified=True)
    response = api.api_get("/verify-email", {"token": make_token(user.email)})
    assert response.status_code == 200
    assert response.json() == {"status": True, "user": None}


def test_verify_tokens_are_not_single_use(api, user):
    token = make_token(user.email)
    api.api_get("/verify-email", {"token": token})
    again = api.api_get("/verify-email", {"token": token, "callbackURL": "/verified"})
    assert again.status_code == 302
    assert again["Location"] == "/verified"


def test_verify_sends_email_verified(api, user, received):
    api.api_get("/verify-email", {"token": make_token(user.email)})
    assert [name for name, _ in received] == ["email_verified"]
    assert received[0][1]["user"].pk == user.pk


def test_the_mailed_link_verifies(api, user):
    api.api_post("/send-verification-email", {"email": user.email, "callbackURL": "/done"})
    response = follow(api, link_of(mail.outbox[0]))
    assert response.status_code == 302
    assert response["Location"] == "/done"
    assert users.is_email_verified(reload(user)) is True


def test_auto_sign_in_after_verification_starts_a_session(api, user, configure):
    configure(email_verification={"auto_sign_in_after_verification": True})
    response = api.api_get("/verify-email", {"token": make_token(user.email)})
    assert response.status_code == 200
    assert session_cookie(response) is not None
    assert Session.objects.filter(user=user).count() == 1
    assert api.api_get("/get-session").json()["user"]["emailVerified"] is True


def test_auto_sign_in_keeps_the_callers_own_session(signed_in, configure):
    configure(email_verification={"auto_sign_in_after_verification": True})
    response = signed_in.api_get("/verify-email", {"token": make_token(signed_in.user.email)})
    assert response.status_code == 200
    assert Session.objects.filter(user=signed_in.user).count() == 1
    assert signed_in.token in session_cookie(response).value


# --- GET /verify-email: errors --------------------------------------------------------------------
def test_verify_without_token_is_a_validation_error(api, db):
    response = api.api_get("/verify-email")
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "VALIDATION_ERROR"
    assert body["message"].startswith("[query.token] ")


def test_verify_with_an_untrusted_callback_url_is_forbidden(api, user):
    response = api.api_get("/verify-email",
                           {"token": make_token(user.email), "callbackURL": "https://evil.example/"})
    assert response.status_code == 403
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"
    assert users.is_email_verified(reload(user)) is False


def test_verify_with_a_forged_token_is_invalid_token(api, db):
    response = api.api_get("/verify-email", {"token": "not-a-token"})
    assert response.status_code == 401
    body = error_of(response)
    assert body["code"] == "INVALID_TOKEN"
    assert body["message"] == "Invalid token"


def test_verify_with_a_token_of_another_secret_is_invalid_token(api, user, settings):
    token = make_token(user.email)
    settings.SECRET_KEY = "another-secret-" + "y" * 40
    response = api.api_get("/verify-email", {"token": token})
    assert error_of(response)["code"] == "INVALID_TOKEN"


def test_verify_with_an_expired_token_is_token_expired(api, user):
    response = api.api_get("/verify-email", {"token": make_token(user.email, expires_in=-5)})
    assert response.status_code == 401
    body = error_of(response)
    assert body["code"] == "TOKEN_EXPIRED"
    assert body["message"] == "Token expired"


def test_verify_for_an_unknown_address_is_user_not_found(api, db):
    response = api.api_get("/verify-email", {"token": make_token("ghost@example.com")})
    assert response.status_code == 401
    body = error_of(response)
    assert body["code"] == "USER_NOT_FOUND"
    assert body["message"] == "User not found"


def test_token_errors_with_a_callback_url_redirect_with_the_code(api, db):
    response = api.api_get("/verify-email", {"token": "bad", "callbackURL": "/verified"})
    assert response.status_code == 302
    assert response["Location"] == "/verified?error=INVALID_TOKEN"


def test_token_error_redirects_append_to_an_existing_query(api, user):
    response = api.api_get("/verify-email", {"token": make_token(user.email, expires_in=-5),
                                             "callbackURL": "/verified?from=mail"})
    assert response["Location"] == "/verified?from=mail&error=TOKEN_EXPIRED"


def test_unknown_user_with_a_callback_url_redirects_with_the_code(api, db):
    response = api.api_get("/verify-email",
                           {"token": make_token("ghost@example.com"), "callbackURL": f"{ORIGIN}/v"})
    assert response["Location"] == f"{ORIGIN}/v?error=USER_NOT_FOUND"


def test_verify_in_process_raises_unauthorized(db):
    with pytest.raises(APIError) as raised:
        auth.api.verify_email(query={"token": "bad"})
    assert raised.value.status == "UNAUTHORIZED"
    assert raised.value.code == "INVALID_TOKEN"


def test_verify_in_process_redirect_raises_found_with_location(user):
    with pytest.raises(APIError) as raised:
        auth.api.verify_email(query={"token": make_token(user.email), "callbackURL": "/ok"})
    assert raised.value.status == "FOUND"
    assert raised.value.headers["location"] == "/ok"


# --- GET /verify-email: change-e-mail tokens ------------------------------------------------------
def change_token(user, new_email, request_type):
    return make_token(email=user.email, update_to=new_email, request_type=request_type)


def test_change_verification_moves_the_address_and_verifies_it(api, user):
    token = change_token(user, "new@example.com", "change-email-verification")
    response = api.api_get("/verify-email", {"token": token})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] is True
    assert body["user"]["email"] == "new@example.com"
    assert body["user"]["emailVerified"] is True
    fresh = reload(user)
    assert (fresh.email, users.is_email_verified(fresh)) == ("new@example.com", True)


def test_change_verification_signs_in_a_caller_without_session(api, user):
    token = change_token(user, "new@example.com", "change-email-verification")
    response = api.api_get("/verify-email", {"token": token})
    assert session_cookie(response) is not None
    assert api.api_get("/get-session").json()["user"]["email"] == "new@example.com"


def test_change_verification_keeps_the_callers_session(signed_in):
    token = change_token(signed_in.user, "new@example.com", "change-email-verification")
    response = signed_in.api_get("/verify-email", {"token": token})
    assert response.status_code == 200
    assert Session.objects.filter(user=signed_in.user).count() == 1
    assert signed_in.token in session_cookie(response).value


def test_change_verification_with_a_callback_url_redirects(api, user):
    token = change_token(user, "new@example.com", "change-email-verification")
    response = api.api_get("/verify-email", {"token": token, "callbackURL": "/changed"})
    assert response.status_code == 302
    assert response["Location"] == "/changed"
    assert reload(user).email == "new@example.com"


def test_change_verification_sends_email_changed_and_email_verified(api, user, received):
    api.api_get("/verify-email", {"token": change_token(user, "new@example.com",
                                                        "change-email-verification")})
    assert [name for name, _ in received] == ["email_changed", "email_verified"]
    assert received[0][1]["old_email"] == "ada@example.com"
    assert received[0][1]["new_email"] == "new@example.com"


def test_a_change_link_applied_twice_finds_no_user(api, user):
    token = change_token(user, "new@example.com", "change-email-verification")
    api.api_get("/verify-email", {"token": token})
    again = api.api_get("/verify-email", {"token": token})
    assert again.status_code == 401
    assert error_of(again)["code"] == "USER_NOT_FOUND"


def test_change_token_while_another_user_is_signed_in_is_invalid_user(signed_in, make_user):
    other = make_user(email="bob@example.com")
    token = change_token(other, "new@example.com", "change-email-verification")
    response = signed_in.api_get("/verify-email", {"token": token})
    assert response.status_code == 401
    body = error_of(response)
    assert body["code"] == "INVALID_USER"
    assert body["message"] == "Invalid user"
    assert reload(other).email == "bob@example.com"


def test_invalid_user_with_a_callback_url_redirects_with_the_code(signed_in, make_user):
    other = make_user(email="bob@example.com")
    token = change_token(other, "new@example.com", "change-email-verification")
    response = signed_in.api_get("/verify-email", {"token": token, "callbackURL": "/changed"})
    assert response["Location"] == "/changed?error=INVALID_USER"


def test_change_onto_an_address_taken_meanwhile_is_refused(api, user, make_user):
    make_user(email="new@example.com")
    token = change_token(user, "new@example.com", "change-email-verification")
    response = api.api_get("/verify-email", {"token": token})
    assert response.status_code == 422
    assert error_of(response)["code"] == "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL"
    assert reload(user).email == "ada@example.com"


def test_change_confirmation_mails_a_verification_link_to_the_new_address(api, user):
    token = change_token(user, "new@example.com", "change-email-confirmation")
    response = api.api_get("/verify-email", {"token": token, "callbackURL": "/changed"})
    assert response.status_code == 302
    assert response["Location"] == "/changed"
    assert [m.to for m in mail.outbox] == [["new@example.com"]]
    assert mail.outbox[0].subject == "Confirm your new email address"
    assert link_of(mail.outbox[0]).endswith("&callbackURL=%2Fchanged")
    assert reload(user).email == "ada@example.com"


def test_change_confirmation_without_callback_answers_status_true(api, user):
    token = change_token(user, "new@example.com", "change-email-confirmation")
    response = api.api_get("/verify-email", {"token": token})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    assert session_cookie(response) is None


def test_the_link_sent_after_confirmation_completes_the_change(api, user):
    api.api_get("/verify-email", {"token": change_token(user, "new@example.com",
                                                        "change-email-confirmation")})
    response = follow(api, link_of(mail.outbox[0]))
    assert response.status_code == 302
    fresh = reload(user)
    assert (fresh.email, users.is_email_verified(fresh)) == ("new@example.com", True)


def test_legacy_change_token_moves_the_address_unverified(api, make_user):
    user = make_user(email_verified=True)
    response = api.api_get("/verify-email", {"token": change_token(user, "new@example.com", None)})
    assert response.status_code == 200
    body = response.json()
    assert body["user"]["email"] == "new@example.com"
    assert body["user"]["emailVerified"] is False
    assert session_cookie(response) is not None


def test_legacy_change_token_mails_a_plain_link_to_the_new_address(api, user):
    api.api_get("/verify-email", {"token": change_token(user, "new@example.com", None)})
    assert [m.to for m in mail.outbox] == [["new@example.com"]]
    assert mail.outbox[0].subject == "Verify your email address"
    follow(api, link_of(mail.outbox[0]))
    assert users.is_email_verified(reload(user)) is True


def test_legacy_change_sends_email_changed_only(api, user, received):
    api.api_get("/verify-email", {"token": change_token(user, "new@example.com", None)})
    assert [name for name, _ in received] == ["email_changed"]
