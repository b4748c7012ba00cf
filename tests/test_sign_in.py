"""POST /sign-in/email (core.md §4.4), including the no-enumeration rule."""

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher

from authservice import hashers, users
from authservice.models import Account, Session
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.test_cookies import set_cookies

# The example project turns the twoFactor plugin on (AUTH_TWO_FACTOR), which adds twoFactorEnabled.
USER_KEYS = {"id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt", "twoFactorEnabled"}


class CountingHasher(MD5PasswordHasher):
    """A real hasher that counts how often it hashes (to see that unknown users cost a hash)."""

    algorithm = "counting_md5"
    calls = 0

    def encode(self, password, salt):
        type(self).calls += 1
        return super().encode(password, salt)


@pytest.fixture
def counting_hasher(settings):
    settings.PASSWORD_HASHERS = ["tests.test_sign_in.CountingHasher"]
    # Sign-in verifies against a throw-away hash made once per process and hasher (I7): make it now.
    hashers.check_password_evenly(None, "warm-up")
    CountingHasher.calls = 0
    return CountingHasher


def sign_in(api, **body):
    payload = {"email": "ada@example.com", "password": PASSWORD}
    payload.update(body)
    return api.api_post("/sign-in/email", payload)


def test_sign_in_answers_redirect_false_token_and_user(api, user):
    response = sign_in(api)
    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["redirect", "token", "user"]
    assert body["redirect"] is False
    assert set(body["user"]) == USER_KEYS
    assert body["user"]["id"] == str(user.pk)
    assert "Location" not in response


def test_sign_in_token_is_the_new_sessions_token(api, user):
    token = sign_in(api).json()["token"]
    session = Session.objects.get(token=token)
    assert session.user_id == user.pk
    assert len(token) == 32 and token.isalnum()


def test_sign_in_with_callback_url_answers_200_with_url_and_location(api, user):
    response = sign_in(api, callbackURL="/dashboard")
    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["redirect", "token", "url", "user"]
    assert body["redirect"] is True
    assert body["url"] == "/dashboard"
    assert response["Location"] == "/dashboard"


def test_sign_in_with_a_trusted_absolute_callback_url(api, user):
    response = sign_in(api, callbackURL="http://127.0.0.1:8000/app?x=1")
    assert response.json()["url"] == "http://127.0.0.1:8000/app?x=1"
    assert response["Location"] == "http://127.0.0.1:8000/app?x=1"


def test_sign_in_matches_the_email_case_insensitively(api, user):
    assert sign_in(api, email="ADA@Example.COM").status_code == 200


def test_sign_in_keeps_the_users_other_sessions(api, user):
    first = sign_in(api).json()["token"]
    second = sign_in(ApiClient()).json()["token"]
    assert first != second
    assert set(Session.objects.filter(user=user).values_list("token", flat=True)) == {first, second}


def test_sign_in_records_ip_address_and_user_agent(api, user):
    token = sign_in(api, **{}).json()["token"]
    assert Session.objects.get(token=token).ip_address == "127.0.0.1"
    token = api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD},
                         HTTP_USER_AGENT="Mozilla/5.0 test", REMOTE_ADDR="10.1.2.3").json()["token"]
    session = Session.objects.get(token=token)
    assert (session.ip_address, session.user_agent) == ("10.1.2.3", "Mozilla/5.0 test")


def test_ipv6_addresses_are_stored_as_their_64_prefix(api, user):
    token = api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD},
                         REMOTE_ADDR="2001:db8::1234:5678").json()["token"]
    assert Session.objects.get(token=token).ip_address == "2001:0db8:0000:0000:0000:0000:0000:0000"


def test_ipv4_mapped_addresses_are_stored_as_ipv4(api, user):
    token = api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD},
                         REMOTE_ADDR="::ffff:10.0.0.7").json()["token"]
    assert Session.objects.get(token=token).ip_address == "10.0.0.7"


# --- failures ----------------------------------------------------------------------------------
def test_a_wrong_password_is_401_invalid_email_or_password(api, user):
    response = sign_in(api, password="wrong password")
    assert response.status_code == 401
    assert error_of(response) == {"message": "Invalid email or password",
                                  "code": "INVALID_EMAIL_OR_PASSWORD", "status": 401}
    assert set_cookies(response) == {}
    assert not Session.objects.exists()


def test_an_unknown_email_and_a_wrong_password_give_identical_bodies(api, user):
    unknown = sign_in(api, email="nobody@example.com")
    wrong = sign_in(api, password="wrong password")
    assert unknown.status_code == wrong.status_code == 401
    assert unknown.content == wrong.content
    assert unknown["Content-Type"] == wrong["Content-Type"]


def test_an_unknown_email_still_costs_a_password_hash(api, counting_hasher, db):
    sign_in(api, email="nobody@example.com")
    assert counting_hasher.calls == 1


def test_a_wrong_password_costs_a_password_hash(api, counting_hasher, make_user):
    make_user()
    counting_hasher.calls = 0
    sign_in(api, password="wrong password")
    assert counting_hasher.calls == 1


def test_a_user_without_password_costs_a_hash_and_gets_the_same_answer(api, counting_hasher,
                                                                     make_user):
    ghost = make_user(email="social@example.com", password=None)
    counting_hasher.calls = 0
    response = sign_in(api, email=ghost.email)
    assert counting_hasher.calls == 1
    assert response.content == sign_in(api, email="nobody@example.com").content


@pytest.mark.skipif(not users.layout().own, reason="a project's own model: its usable password is the credential")
def test_a_user_without_credential_account_cannot_sign_in_with_a_password(api, user):
    Account.objects.filter(user=user).delete()
    response = sign_in(api)
    assert error_of(response)["code"] == "INVALID_EMAIL_OR_PASSWORD"


def test_an_inactive_user_cannot_sign_in(api, user):
    user.is_active = False
    user.save()
    assert error_of(sign_in(api))["code"] == "INVALID_EMAIL_OR_PASSWORD"


def test_an_empty_password_is_a_wrong_password(api, user):
    assert error_of(sign_in(api, password=""))["code"] == "INVALID_EMAIL_OR_PASSWORD"


@pytest.mark.parametrize("email", ["not-an-email", "a@", "@example.com", "a b@example.com", ""])
def test_a_malformed_email_is_400_invalid_email(api, db, email):
    response = sign_in(api, email=email)
    assert error_of(response) == {"message": "Invalid email", "code": "INVALID_EMAIL", "status": 400}


def test_email_and_password_disabled(configure, api, user):
    configure(email_and_password={"enabled": False})
    assert error_of(sign_in(api)) == {"message": "Email and password is not enabled",
                                      "code": "EMAIL_PASSWORD_DISABLED", "status": 400}


def test_unverified_user_is_403_when_verification_is_required(configure, api, user):
    configure(email_and_password={"require_email_verification": True})
    response = sign_in(api)
    assert error_of(response) == {"message": "Email not verified", "code": "EMAIL_NOT_VERIFIED",
                                  "status": 403}
    assert not Session.objects.exists()


def test_verified_user_signs_in_when_verification_is_required(configure, api, make_user):
    configure(email_and_password={"require_email_verification": True})
    make_user(email_verified=True)
    assert sign_in(api).status_code == 200


def test_missing_fields_are_named(api, db):
    response = api.api_post("/sign-in/email", {})
    assert error_of(response)["message"] == (
        "[body.email] Invalid input: expected string, received undefined; "
        "[body.password] Invalid input: expected string, received undefined")


def test_remember_me_must_be_a_boolean(api, user):
    response = sign_in(api, rememberMe="no")
    assert error_of(response)["message"] == \
        "[body.rememberMe] Invalid input: expected boolean, received string"


def test_an_imported_better_auth_hash_signs_in_and_is_rehashed(api, make_user, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher",
                                 "authservice.hashers.BetterAuthScryptPasswordHasher"]
    user = make_user(password=None)
    user.password = ("3093cf50177af8408b7e005f751fb47a:4871a1ce04146ac23825323af026de7a881bba96ccd69ec0"
                     "eeee230d154d6333ead7d4931973fb08614d14d23024fbc6f17cf02e697cfaab9819bccb61abca0a")
    user.save()
    response = sign_in(api, password="correct horse battery staple")
    assert response.status_code == 200
    user.refresh_from_db()
    assert user.password.startswith("md5$")
