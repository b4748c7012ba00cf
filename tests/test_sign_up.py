"""POST /sign-up/email (core.md §4.3)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import IntegrityError

from authservice import users
from authservice.models import Account, Session
from tests.conftest import PASSWORD, error_of
from tests.test_cookies import set_cookies

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
# The example project turns the twoFactor plugin on (AUTH_TWO_FACTOR), which adds twoFactorEnabled.
USER_KEYS = {"id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt", "twoFactorEnabled"}


def sign_up(api, **body):
    payload = {"name": "Ada", "email": "ada@example.com", "password": PASSWORD}
    payload.update(body)
    return api.api_post("/sign-up/email", payload)


def test_sign_up_answers_exactly_token_and_user(api, db):
    response = sign_up(api)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"token", "user"}
    assert set(body["user"]) == USER_KEYS


def test_sign_up_user_fields(api, db):
    user = sign_up(api, name="Ada Lovelace").json()["user"]
    assert user["name"] == "Ada Lovelace"
    assert user["email"] == "ada@example.com"
    assert user["emailVerified"] is False
    assert user["image"] is None
    assert isinstance(user["id"], str) and user["id"]
    assert ISO.match(user["createdAt"]) and ISO.match(user["updatedAt"])


def test_sign_up_answers_json(api, db):
    response = sign_up(api)
    assert response["Content-Type"] == "application/json"


def test_sign_up_sets_the_session_cookie_with_the_same_token(api, db):
    from authservice.cookies import signed_value

    response = sign_up(api)
    token = response.json()["token"]
    value, attrs = set_cookies(response)["auth.session_token"]
    assert value == signed_value(token)
    assert attrs["max-age"] == "604800"
    assert Session.objects.filter(token=token).exists()


def test_sign_up_session_is_usable_at_once(api, db):
    token = sign_up(api).json()["token"]
    assert api.api_get("/get-session").json()["session"]["token"] == token


def test_sign_up_stores_the_email_lower_cased(api, db):
    assert sign_up(api, email="Ada.LOVELACE@Example.COM").json()["user"]["email"] == \
        "ada.lovelace@example.com"
    assert get_user_model().objects.filter(email="ada.lovelace@example.com").exists()


def test_sign_up_creates_a_credential_account(api, db):
    user_id = sign_up(api).json()["user"]["id"]
    account = Account.objects.get(user_id=user_id)
    assert (account.provider_id, account.account_id) == ("credential", user_id)


def test_sign_up_keeps_the_image(api, db):
    assert sign_up(api, image="https://example.com/a.png").json()["user"]["image"] == \
        "https://example.com/a.png"


def test_sign_up_allows_an_empty_name(api, db):
    response = sign_up(api, name="")
    assert response.status_code == 200
    assert response.json()["user"]["name"] == ""


def test_sign_up_ignores_email_verified_and_unknown_keys(api, db):
    response = sign_up(api, emailVerified=True, isAdmin=True, role="admin")
    assert response.status_code == 200
    assert response.json()["user"]["emailVerified"] is False
    assert users.is_email_verified(get_user_model().objects.get()) is False


def test_sign_up_password_is_stored_hashed(api, db):
    sign_up(api)
    stored = get_user_model().objects.get()
    assert PASSWORD not in stored.password
    assert stored.check_password(PASSWORD)


def test_sign_up_remember_me_false_sends_the_dont_remember_trio(api, db):
    response = sign_up(api, rememberMe=False)
    cookies = set_cookies(response)
    assert set(cookies) == {"auth.session_token", "auth.dont_remember"}
    assert "max-age" not in cookies["auth.session_token"][1]
    session = Session.objects.get(token=response.json()["token"])
    assert (session.expires_at - session.created_at).total_seconds() == pytest.approx(86400, abs=2)


def test_sign_up_records_ip_and_user_agent(api, db):
    token = sign_up(api, **{}).json()["token"]
    session = Session.objects.get(token=token)
    assert session.ip_address == "127.0.0.1"
    assert session.user_agent == ""


# --- password policy ---------------------------------------------------------------------------
def test_a_seven_character_password_is_too_short(api, db):
    response = sign_up(api, password="1234567")
    assert response.status_code == 400
    assert error_of(response) == {"message": "Password too short", "code": "PASSWORD_TOO_SHORT",
                                  "status": 400}


def test_an_eight_character_password_is_enough(api, db):
    assert sign_up(api, password="12345678").status_code == 200


def test_a_129_character_password_is_too_long(api, db):
    response = sign_up(api, password="a" * 129)
    assert error_of(response) == {"message": "Password too long", "code": "PASSWORD_TOO_LONG",
                                  "status": 400}


def test_a_128_character_password_is_allowed(api, db):
    assert sign_up(api, password="a" * 128).status_code == 200


def test_password_length_counts_utf16_units(api, db):
    # 65 astral characters are 130 UTF-16 code units: too long for better-auth, so for us too.
    response = sign_up(api, password="😀" * 65)
    assert error_of(response)["code"] == "PASSWORD_TOO_LONG"
    assert sign_up(api, password="😀" * 4).status_code == 200


def test_an_empty_password_fails_the_schema(api, db):
    response = sign_up(api, password="")
    assert error_of(response) == {
        "message": "[body.password] Too small: expected string to have >=1 characters",
        "code": "VALIDATION_ERROR", "status": 400}


# --- duplicates --------------------------------------------------------------------------------
def test_a_taken_email_is_a_422(api, user):
    response = sign_up(api, email="ada@example.com")
    assert response.status_code == 422
    assert error_of(response) == {"message": "User already exists. Use another email.",
                                  "code": "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL", "status": 422}


def test_duplicates_are_found_case_insensitively(api, user):
    response = sign_up(api, email="ADA@Example.com")
    assert error_of(response)["code"] == "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL"
    assert get_user_model().objects.count() == 1


def test_a_duplicate_sets_no_cookie(api, user):
    assert set_cookies(sign_up(api)) == {}


def test_an_address_taken_between_the_check_and_the_insert_is_a_422(api, user, monkeypatch):
    # The concurrent sign-up committed after this one looked: the insert hits the unique constraint
    # (raised here, as not every user model has one).
    real_email_taken, looked = users.email_taken, []

    def taken_after_the_first_look(email, **kwargs):
        looked.append(email)
        return len(looked) > 1 and real_email_taken(email, **kwargs)

    def unique_constraint_failed(**kwargs):
        raise IntegrityError("UNIQUE constraint failed")

    monkeypatch.setattr(users, "email_taken", taken_after_the_first_look)
    monkeypatch.setattr(users, "create", unique_constraint_failed)
    response = sign_up(api, email="ada@example.com")
    assert error_of(response)["code"] == "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL"
    assert len(looked) == 2


def test_another_integrity_error_is_not_an_existence_answer(api, db, monkeypatch):
    def refused(**kwargs):
        raise IntegrityError("CHECK constraint failed")

    monkeypatch.setattr(users, "create", refused)
    response = sign_up(api, email="nobody@example.com")
    assert response.status_code == 500
    assert error_of(response)["code"] == "INTERNAL_SERVER_ERROR"


# --- modes -------------------------------------------------------------------------------------
def test_sign_up_disabled(configure, api, db):
    configure(email_and_password={"disable_sign_up": True})
    response = sign_up(api)
    assert error_of(response) == {"message": "Email and password sign up is not enabled",
                                  "code": "EMAIL_PASSWORD_SIGN_UP_DISABLED", "status": 400}
    assert not get_user_model().objects.exists()


def test_email_and_password_disabled_blocks_sign_up(configure, api, db):
    configure(email_and_password={"enabled": False})
    assert error_of(sign_up(api))["code"] == "EMAIL_PASSWORD_SIGN_UP_DISABLED"


def test_without_auto_sign_in_the_token_is_null_and_no_cookie(configure, api, db):
    configure(email_and_password={"auto_sign_in": False})
    response = sign_up(api)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"token", "user"} and body["token"] is None
    assert set_cookies(response) == {}
    assert not Session.objects.exists()


def test_without_auto_sign_in_a_duplicate_gets_a_fake_new_user(configure, api, user):
    configure(email_and_password={"auto_sign_in": False})
    response = sign_up(api, email="ADA@example.com", name="Someone")
    assert response.status_code == 200
    body = response.json()
    assert body["token"] is None
    assert set(body["user"]) == USER_KEYS
    assert body["user"]["id"] != str(user.pk)
    assert body["user"]["image"] is None
    assert body["user"]["email"] == "ada@example.com"
    assert get_user_model().objects.count() == 1


def test_a_duplicate_without_session_gets_the_headers_of_a_new_user(configure, api, user):
    configure(email_and_password={"require_email_verification": True})
    taken = sign_up(api, email=user.email)
    new = sign_up(api, email="grace@example.com")
    assert taken.status_code == new.status_code == 200
    assert sorted(name for name, _ in taken.items()) == sorted(name for name, _ in new.items())
    assert set_cookies(taken) == set_cookies(new) == {}


def test_require_email_verification_sends_a_mail_and_no_session(configure, api, db):
    configure(email_and_password={"require_email_verification": True})
    response = sign_up(api, callbackURL="/welcome")
    assert response.status_code == 200
    assert response.json()["token"] is None
    assert set_cookies(response) == {}
    assert [m.to for m in mail.outbox] == [["ada@example.com"]]
    assert "callbackURL=%2Fwelcome" in mail.outbox[0].body


def test_by_default_no_verification_mail_is_sent(api, db):
    sign_up(api)
    assert mail.outbox == []


def test_each_sign_up_creates_a_distinct_user(api, db):
    from tests.conftest import ApiClient

    first = sign_up(api, email="a@example.com").json()
    second = sign_up(ApiClient(), email="b@example.com").json()
    assert first["user"]["id"] != second["user"]["id"]
    assert first["token"] != second["token"]
