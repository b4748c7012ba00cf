"""Password reset: request, the mailed link, and the reset itself (core.md §4.9-§4.11, §7.2, §9)."""

import re
import threading
import time
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection
from django.utils import timezone

from authservice import auth, signals, tokens, users
from authservice.errors import APIError
from authservice.flows import password_reset
from authservice.models import Account, Session, Verification
from tests.conftest import BASE, ORIGIN, PASSWORD, error_of, set_updated_at

pytestmark = pytest.mark.django_db

MESSAGE = "If this email exists in our system, check your email for the reset link"
RESET_LINK = re.compile(
    rf"^{re.escape(ORIGIN + BASE)}/reset-password/([A-Za-z0-9]{{24}})\?callbackURL=(\S*)$")
NEW_PASSWORD = "a brand new password"
PATHS = ("/request-password-reset", "/forget-password")


def reset_link(message):
    return re.search(r"https?://\S+", message.body).group(0)


def issue_token(user, expires_in=3600):
    """A reset token as request-password-reset stores it."""
    token = tokens.random_string(24)
    Verification.objects.create(identifier=f"reset-password:{token}", value=user.pk,
                                expires_at=timezone.now() + timedelta(seconds=expires_in))
    return token


def signs_in(api, email, password):
    return api.api_post("/sign-in/email", {"email": email, "password": password}).status_code == 200


# --- POST /request-password-reset and /forget-password --------------------------------------------
@pytest.mark.parametrize("path", PATHS)
def test_request_for_a_known_user_answers_the_fixed_message(api, user, path):
    response = api.api_post(path, {"email": user.email, "redirectTo": "/reset"})
    assert response.status_code == 200
    assert response.json() == {"status": True, "message": MESSAGE}


@pytest.mark.parametrize("path", PATHS)
def test_request_mails_a_reset_link_to_the_user(api, user, path):
    api.api_post(path, {"email": user.email, "redirectTo": "/reset"})
    assert [m.to for m in mail.outbox] == [[user.email]]
    assert mail.outbox[0].subject == "Reset your password"
    match = RESET_LINK.match(reset_link(mail.outbox[0]))
    assert match, reset_link(mail.outbox[0])
    assert match.group(2) == "%2Freset"


@pytest.mark.parametrize("path", PATHS)
def test_request_for_an_unknown_address_answers_the_same_without_mail(api, db, path):
    response = api.api_post(path, {"email": "nobody@example.com", "redirectTo": "/reset"})
    assert response.status_code == 200
    assert response.json() == {"status": True, "message": MESSAGE}
    assert mail.outbox == []
    assert not Verification.objects.exists()


@pytest.mark.parametrize("path", PATHS)
def test_known_and_unknown_addresses_get_the_same_headers(api, user, path):
    known = api.api_post(path, {"email": user.email})
    unknown = api.api_post(path, {"email": "nobody@example.com"})
    assert sorted(known.items()) == sorted(unknown.items())


def test_a_request_that_an_account_change_overtook_in_the_queue_mails_nothing(user):
    requested_at = time.time() - 60
    backdate(user, 30)
    password_reset.deliver(email=user.email, base=ORIGIN + BASE, callback_url=None,
                           requested_at=requested_at)
    assert mail.outbox == []
    assert not Verification.objects.exists()


def test_request_stores_the_token_as_a_verification_row(api, user):
    before = timezone.now()
    api.api_post("/request-password-reset", {"email": user.email})
    token = RESET_LINK.match(reset_link(mail.outbox[0])).group(1)
    row = Verification.objects.get()
    assert row.identifier == f"reset-password:{token}"
    assert row.value == str(user.pk)
    lifetime = (row.expires_at - before).total_seconds()
    assert 3599 <= lifetime <= 3605


def test_request_matches_the_address_case_insensitively(api, user):
    api.api_post("/request-password-reset", {"email": "ADA@EXAMPLE.COM"})
    assert [m.to for m in mail.outbox] == [[user.email]]


def test_request_without_redirect_to_leaves_the_callback_url_empty(api, user):
    api.api_post("/request-password-reset", {"email": user.email})
    assert reset_link(mail.outbox[0]).endswith("?callbackURL=")


def test_request_with_an_absolute_redirect_to_encodes_it(api, user):
    api.api_post("/request-password-reset", {"email": user.email, "redirectTo": f"{ORIGIN}/reset?a=1"})
    assert reset_link(mail.outbox[0]).endswith("?callbackURL=http%3A%2F%2F127.0.0.1%3A8000%2Freset%3Fa%3D1")


def test_request_for_an_inactive_user_sends_nothing(api, make_user):
    make_user(is_active=False)
    response = api.api_post("/request-password-reset", {"email": "ada@example.com"})
    assert response.json() == {"status": True, "message": MESSAGE}
    assert mail.outbox == []


def test_each_request_makes_a_new_token(api, user):
    api.api_post("/request-password-reset", {"email": user.email})
    api.api_post("/request-password-reset", {"email": user.email})
    tokens = {RESET_LINK.match(reset_link(m)).group(1) for m in mail.outbox}
    assert len(tokens) == 2


@pytest.mark.parametrize("path", PATHS)
def test_request_without_email_is_a_validation_error(api, db, path):
    response = api.api_post(path, {})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "VALIDATION_ERROR"
    assert body["message"] == "[body.email] Invalid input: expected string, received undefined"


def test_request_with_a_malformed_email_is_a_validation_error(api, db):
    response = api.api_post("/forget-password", {"email": "a@"})
    assert response.status_code == 400
    assert error_of(response)["message"] == "[body.email] Invalid email address"


@pytest.mark.parametrize("path", PATHS)
def test_request_with_an_untrusted_redirect_to_is_forbidden(api, user, path):
    response = api.api_post(path, {"email": user.email, "redirectTo": "https://evil.example/reset"})
    assert response.status_code == 403
    assert error_of(response)["code"] == "INVALID_REDIRECT_URL"
    assert mail.outbox == []


@pytest.mark.parametrize("path", PATHS)
def test_request_while_reset_is_off_is_reset_password_disabled(api, user, configure, path):
    configure(email_and_password={"reset_password_enabled": False})
    response = api.api_post(path, {"email": user.email})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "RESET_PASSWORD_DISABLED"
    assert body["message"] == "Reset password isn't enabled"


@pytest.mark.parametrize("path", PATHS)
def test_request_is_limited_to_three_a_minute(api, db, configure, path):
    configure(rate_limit={"enabled": True})
    statuses = [api.api_post(path, {"email": "nobody@example.com"}).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


def test_request_in_process_returns_the_body(user):
    result = auth.api.forget_password(body={"email": user.email})
    assert result == {"status": True, "message": MESSAGE}
    assert len(mail.outbox) == 1


def backdate(user, seconds):
    """As if the account had last changed ``seconds`` ago (update() leaves auto_now alone)."""
    set_updated_at(user, timezone.now() - timedelta(seconds=seconds))


def test_the_token_lives_from_the_request_not_from_the_send(user):
    backdate(user, 7200)
    requested_at = time.time() - 600
    password_reset.deliver(email=user.email, base=ORIGIN + BASE, callback_url=None,
                           requested_at=requested_at)
    row = Verification.objects.get(identifier__startswith="reset-password:")
    assert abs(row.expires_at.timestamp() - (requested_at + 3600)) < 1


def test_a_request_that_waited_in_the_queue_past_the_lifetime_mails_nothing(user):
    backdate(user, 7200)
    password_reset.deliver(email=user.email, base=ORIGIN + BASE, callback_url=None,
                           requested_at=time.time() - 3601)
    assert mail.outbox == []
    assert not Verification.objects.exists()


# --- GET /reset-password/:token --------------------------------------------------------------------
def test_reset_link_redirects_to_the_callback_with_the_token(api, user):
    token = issue_token(user)
    response = api.api_get(f"/reset-password/{token}", {"callbackURL": "/reset"})
    assert response.status_code == 302
    assert response["Location"] == f"{ORIGIN}/reset?token={token}"


def test_reset_link_keeps_the_callbacks_own_query(api, user):
    token = issue_token(user)
    response = api.api_get(f"/reset-password/{token}", {"callbackURL": f"{ORIGIN}/reset?lang=de"})
    assert response["Location"] == f"{ORIGIN}/reset?lang=de&token={token}"


def test_reset_link_does_not_consume_the_token(api, user):
    token = issue_token(user)
    api.api_get(f"/reset-password/{token}", {"callbackURL": "/reset"})
    again = api.api_get(f"/reset-password/{token}", {"callbackURL": "/reset"})
    assert again["Location"] == f"{ORIGIN}/reset?token={token}"


def test_reset_link_with_an_unknown_token_redirects_with_invalid_token(api, db):
    response = api.api_get("/reset-password/unknowntoken123", {"callbackURL": "/reset"})
    assert response.status_code == 302
    assert response["Location"] == f"{ORIGIN}/reset?error=INVALID_TOKEN"


def test_reset_link_with_an_expired_token_redirects_with_invalid_token(api, user):
    token = issue_token(user, expires_in=-1)
    response = api.api_get(f"/reset-password/{token}", {"callbackURL": "/reset"})
    assert response["Location"] == f"{ORIGIN}/reset?error=INVALID_TOKEN"


def test_reset_link_with_an_empty_callback_goes_to_the_error_page(api, user):
    token = issue_token(user)
    response = api.api_get(f"/reset-password/{token}", {"callbackURL": ""})
    assert response.status_code == 302
    assert response["Location"] == f"{ORIGIN}{BASE}/error?error=INVALID_TOKEN"


def test_the_mailed_link_without_redirect_to_lands_on_the_error_page(api, user):
    api.api_post("/request-password-reset", {"email": user.email})
    response = api.get(reset_link(mail.outbox[0])[len(ORIGIN):])
    assert response["Location"] == f"{ORIGIN}{BASE}/error?error=INVALID_TOKEN"


def test_the_mailed_link_with_redirect_to_hands_the_token_over(api, user):
    api.api_post("/request-password-reset", {"email": user.email, "redirectTo": "/reset"})
    link = reset_link(mail.outbox[0])
    token = RESET_LINK.match(link).group(1)
    response = api.get(link[len(ORIGIN):])
    assert response["Location"] == f"{ORIGIN}/reset?token={token}"


def test_reset_link_without_callback_url_is_a_validation_error(api, user):
    response = api.api_get(f"/reset-password/{issue_token(user)}")
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "VALIDATION_ERROR"
    assert body["message"].startswith("[query.callbackURL] ")


def test_reset_link_with_an_untrusted_callback_is_forbidden(api, user):
    response = api.api_get(f"/reset-password/{issue_token(user)}", {"callbackURL": "//evil.example"})
    assert response.status_code == 403
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"


def test_reset_link_in_process_raises_found(user):
    token = issue_token(user)
    with pytest.raises(APIError) as raised:
        auth.api.request_password_reset_callback(params={"token": token}, query={"callbackURL": "/r"})
    assert raised.value.status == "FOUND"
    assert raised.value.headers["location"] == f"{ORIGIN}/r?token={token}"


# --- POST /reset-password --------------------------------------------------------------------------
def test_reset_sets_the_new_password(api, user):
    response = api.api_post("/reset-password", {"token": issue_token(user), "newPassword": NEW_PASSWORD})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    assert signs_in(api, user.email, NEW_PASSWORD)
    assert not signs_in(api, user.email, PASSWORD)


def test_reset_sets_no_cookie(api, user):
    response = api.api_post("/reset-password", {"token": issue_token(user), "newPassword": NEW_PASSWORD})
    assert not response.cookies


def test_reset_accepts_the_token_in_the_query(api, user):
    token = issue_token(user)
    response = api.post(f"{BASE}/reset-password?token={token}", {"newPassword": NEW_PASSWORD},
                        content_type="application/json", HTTP_ORIGIN=ORIGIN)
    assert response.status_code == 200


def test_reset_prefers_the_body_token_over_the_query(api, user):
    token = issue_token(user)
    response = api.post(f"{BASE}/reset-password?token=wrong", {"token": token, "newPassword": NEW_PASSWORD},
                        content_type="application/json", HTTP_ORIGIN=ORIGIN)
    assert response.status_code == 200


def test_reset_consumes_the_token(api, user):
    token = issue_token(user)
    api.api_post("/reset-password", {"token": token, "newPassword": NEW_PASSWORD})
    assert not Verification.objects.filter(identifier=f"reset-password:{token}").exists()
    again = api.api_post("/reset-password", {"token": token, "newPassword": "yet another password"})
    assert again.status_code == 400
    assert error_of(again)["code"] == "INVALID_TOKEN"


def test_reset_keeps_sessions_of_a_verified_user_when_revocation_is_off(signed_in, configure):
    configure(email_and_password={"revoke_sessions_on_password_reset": False})
    users.update(signed_in.user, email_verified=True)
    # A password its holder confirmed after the proof: an unconfirmed one takes its sessions with it
    # (test_reset_of_an_unconfirmed_password_ends_its_sessions_even_when_revocation_is_off).
    Account.objects.filter(user=signed_in.user, provider_id=Account.CREDENTIAL).update(updated_at=timezone.now())
    response = signed_in.api_post("/reset-password",
                                  {"token": issue_token(signed_in.user), "newPassword": NEW_PASSWORD})
    assert response.status_code == 200
    assert signed_in.api_get("/get-session").json() is not None


def test_reset_of_an_unconfirmed_password_ends_its_sessions_even_when_revocation_is_off(signed_in, configure):
    """The address was proven after the password was set (a link followed elsewhere): the sessions that
    password opened may be a pre-hijacker's, and the owner's reset ends them (flows/email_proof.py)."""
    configure(email_and_password={"revoke_sessions_on_password_reset": False})
    users.update(signed_in.user, email_verified=True)
    signed_in.api_post("/reset-password", {"token": issue_token(signed_in.user), "newPassword": NEW_PASSWORD})
    assert signed_in.api_get("/get-session").json() is None


def test_reset_revokes_sessions_by_default(signed_in):
    signed_in.api_post("/reset-password", {"token": issue_token(signed_in.user), "newPassword": NEW_PASSWORD})
    assert not Session.objects.filter(user=signed_in.user).exists()


def test_reset_with_revocation_on_ends_every_session_of_the_user(signed_in, configure):
    configure(email_and_password={"revoke_sessions_on_password_reset": True})
    response = signed_in.api_post("/reset-password",
                                  {"token": issue_token(signed_in.user), "newPassword": NEW_PASSWORD})
    assert response.status_code == 200
    assert signed_in.api_get("/get-session").json() is None


def test_reset_keeps_the_reset_tokens_of_other_users(api, user, make_user):
    other = make_user(email="grace@example.com")
    others = issue_token(other)
    api.api_post("/reset-password", {"token": issue_token(user), "newPassword": NEW_PASSWORD})
    assert Verification.objects.filter(identifier=f"reset-password:{others}").exists()


def test_reset_keeps_other_kinds_of_verification_rows_of_the_user(api, user):
    Verification.objects.create(identifier="delete-account:abc", value=user.pk,
                                expires_at=timezone.now() + timedelta(hours=1))
    api.api_post("/reset-password", {"token": issue_token(user), "newPassword": NEW_PASSWORD})
    assert Verification.objects.filter(identifier="delete-account:abc").exists()


def test_reset_creates_the_credential_account_when_missing(api, make_user):
    user = make_user()
    Account.objects.filter(user=user).delete()
    get_user_model().objects.filter(pk=user.pk).update(password="!")
    api.api_post("/reset-password", {"token": issue_token(user), "newPassword": NEW_PASSWORD})
    assert Account.objects.filter(user=user, provider_id="credential", account_id=user.pk).exists()
    assert signs_in(api, user.email, NEW_PASSWORD)


def test_reset_sends_password_reset(api, user):
    seen = []

    def handler(sender, user, **kwargs):
        seen.append(user.pk)

    signals.password_reset.connect(handler)
    try:
        api.api_post("/reset-password", {"token": issue_token(user), "newPassword": NEW_PASSWORD})
    finally:
        signals.password_reset.disconnect(handler)
    assert seen == [user.pk]


def test_reset_sends_session_revoked_for_each_revoked_session(signed_in, configure):
    configure(email_and_password={"revoke_sessions_on_password_reset": True})
    seen = []

    def handler(sender, user, session, **kwargs):
        seen.append(session.token)

    signals.session_revoked.connect(handler)
    try:
        signed_in.api_post("/reset-password",
                           {"token": issue_token(signed_in.user), "newPassword": NEW_PASSWORD})
    finally:
        signals.session_revoked.disconnect(handler)
    assert seen == [signed_in.token]


def test_the_whole_flow_from_mail_to_new_password(api, user):
    api.api_post("/forget-password", {"email": user.email, "redirectTo": "/reset"})
    landed = api.get(reset_link(mail.outbox[0])[len(ORIGIN):])
    token = landed["Location"].split("token=")[1]
    assert api.api_post("/reset-password", {"token": token, "newPassword": NEW_PASSWORD}).status_code == 200
    assert signs_in(api, user.email, NEW_PASSWORD)


# --- POST /reset-password: errors ------------------------------------------------------------------
def test_reset_without_new_password_is_a_validation_error(api, user):
    response = api.api_post("/reset-password", {"token": issue_token(user)})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "VALIDATION_ERROR"
    assert body["message"] == "[body.newPassword] Invalid input: expected string, received undefined"


def test_reset_without_any_token_is_invalid_token(api, db):
    response = api.api_post("/reset-password", {"newPassword": NEW_PASSWORD})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "INVALID_TOKEN"
    assert body["message"] == "Invalid token"


def test_reset_with_a_seven_character_password_is_too_short(api, user):
    response = api.api_post("/reset-password", {"token": issue_token(user), "newPassword": "x" * 7})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "PASSWORD_TOO_SHORT"
    assert body["message"] == "Password too short"


def test_reset_with_a_129_character_password_is_too_long(api, user):
    response = api.api_post("/reset-password", {"token": issue_token(user), "newPassword": "x" * 129})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "PASSWORD_TOO_LONG"
    assert body["message"] == "Password too long"


def test_reset_accepts_eight_and_128_characters(api, user):
    first = api.api_post("/reset-password", {"token": issue_token(user), "newPassword": "x" * 8})
    assert first.status_code == 200
    other = Verification.objects.create(identifier="reset-password:second", value=user.pk,
                                        expires_at=timezone.now() + timedelta(hours=1))
    assert other
    assert api.api_post("/reset-password", {"token": "second", "newPassword": "y" * 128}).status_code == 200


def test_reset_counts_password_length_in_utf16_units(api, user):
    # Four emoji are 8 UTF-16 units (as JavaScript counts them), though Python sees 4 characters.
    response = api.api_post("/reset-password", {"token": issue_token(user), "newPassword": "😀" * 4})
    assert response.status_code == 200


def test_a_refused_password_leaves_the_token_usable(api, user):
    token = issue_token(user)
    api.api_post("/reset-password", {"token": token, "newPassword": "short"})
    assert api.api_post("/reset-password", {"token": token, "newPassword": NEW_PASSWORD}).status_code == 200


def test_reset_with_an_unknown_token_is_invalid_token(api, db):
    response = api.api_post("/reset-password",
                            {"token": "abcdefghijklmnopqrstuvwx", "newPassword": NEW_PASSWORD})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_TOKEN"


def test_reset_with_an_expired_token_is_invalid_token(api, user):
    response = api.api_post("/reset-password", {"token": issue_token(user, expires_in=-1),
                                                "newPassword": NEW_PASSWORD})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_TOKEN"
    assert signs_in(api, user.email, PASSWORD)


def test_reset_for_a_deleted_user_is_user_not_found(api, user):
    token = issue_token(user)
    Verification.objects.filter(identifier=f"reset-password:{token}").update(value="no-such-user")
    response = api.api_post("/reset-password", {"token": token, "newPassword": NEW_PASSWORD})
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "USER_NOT_FOUND"
    assert body["message"] == "User not found"


def test_reset_in_process_raises_bad_request(db):
    with pytest.raises(APIError) as raised:
        auth.api.reset_password(body={"token": "nope", "newPassword": NEW_PASSWORD})
    assert raised.value.status == "BAD_REQUEST"
    assert raised.value.status_code == 400
    assert raised.value.code == "INVALID_TOKEN"


def test_reset_in_process_succeeds(user):
    assert auth.api.reset_password(body={"token": issue_token(user), "newPassword": NEW_PASSWORD}) == {
        "status": True}


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_resets_cannot_both_use_one_token(make_user):
    if connection.vendor == "sqlite":
        pytest.skip("needs a database server with row locks; run with DATABASE_URL=postgres://...")
    user = make_user()
    token = issue_token(user)
    barrier = threading.Barrier(4)
    outcomes = []

    def attempt(password):
        from django.db import connection as thread_connection

        barrier.wait()
        try:
            auth.api.reset_password(body={"token": token, "newPassword": password})
            outcomes.append(password)
        except APIError as error:
            outcomes.append(error.code)
        finally:
            thread_connection.close()

    threads = [threading.Thread(target=attempt, args=(f"password number {n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [outcome for outcome in outcomes if outcome != "INVALID_TOKEN"]
    assert len(winners) == 1, outcomes
    assert get_user_model().objects.get(pk=user.pk).check_password(winners[0])


@pytest.mark.django_db(transaction=True)
def test_a_token_read_while_another_process_consumes_it_is_refused(make_user):
    """The row is still visible when the second request reads it; only the DELETE's count decides."""
    if connection.vendor == "sqlite":
        pytest.skip("needs a database server with row locks; run with DATABASE_URL=postgres://...")
    from django.db import transaction

    user = make_user()
    token = issue_token(user)
    consumed, release = threading.Event(), threading.Event()
    outcome = []

    def other_process():
        from django.db import connection as thread_connection

        try:
            with transaction.atomic():
                Verification.objects.filter(identifier=f"reset-password:{token}").delete()
                consumed.set()
                release.wait(5)
        finally:
            thread_connection.close()

    def second_request():
        from django.db import connection as thread_connection

        try:
            auth.api.reset_password(body={"token": token, "newPassword": NEW_PASSWORD})
            outcome.append("reset")
        except APIError as error:
            outcome.append(error.code)
        finally:
            thread_connection.close()

    holder = threading.Thread(target=other_process)
    holder.start()
    assert consumed.wait(5)
    racer = threading.Thread(target=second_request)
    racer.start()
    racer.join(0.5)  # it blocks on the row lock until the other transaction ends
    release.set()
    racer.join()
    holder.join()
    assert outcome == ["INVALID_TOKEN"]
    assert get_user_model().objects.get(pk=user.pk).check_password(PASSWORD)


def test_reset_link_with_a_malformed_token_redirects_with_invalid_token(api, db):
    response = api.api_get("/reset-password/a%00b%20c", {"callbackURL": "/reset"})
    assert response.status_code == 302
    assert response["Location"] == f"{ORIGIN}/reset?error=INVALID_TOKEN"


def test_reset_with_a_malformed_token_is_invalid_token(api, db):
    response = api.api_post("/reset-password", {"token": "a b;c" * 100, "newPassword": NEW_PASSWORD})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_TOKEN"
