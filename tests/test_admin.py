"""Django admin: users, sessions and accounts are browsable; secrets are never shown."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from authservice import users
from authservice.models import Account, Session
from tests.test_cookies import make_session

# Our UserAdmin (and these pages of it) exist for authservice's own user model; a project with its own
# model keeps its own user admin. tests/test_user_models.py covers the admin under other models.
pytestmark = pytest.mark.skipif(not users.layout().own, reason="tests authservice's UserAdmin of its own user model")


@pytest.fixture
def admin_client(db):
    superuser = get_user_model().objects.create_superuser(email="root@example.com", password="x" * 12)
    client = Client()
    client.force_login(superuser)
    return client


@pytest.fixture
def records(make_user):
    user = make_user()
    session = make_session(user, token="SeCrEtSeSsIoNtOkEn0123456789abcd", user_agent="agent/1")
    account = Account.objects.create(
        user=user, provider_id="github", account_id="gh-42", scope="read:user,user:email",
        access_token="gho_SECRET_ACCESS_TOKEN", refresh_token="ghr_SECRET_REFRESH_TOKEN",
        id_token="eyJ.SECRET_ID_TOKEN.sig")
    return user, session, account


SECRETS = [b"SeCrEtSeSsIoNtOkEn0123456789abcd", b"gho_SECRET_ACCESS_TOKEN", b"ghr_SECRET_REFRESH_TOKEN",
           b"SECRET_ID_TOKEN"]


@pytest.mark.parametrize("model", ["user", "session", "account"])
def test_a_superuser_can_open_the_changelist(admin_client, records, model):
    response = admin_client.get(f"/admin/authservice/{model}/")
    assert response.status_code == 200
    for secret in SECRETS:
        assert secret not in response.content


def test_the_session_change_page_does_not_show_the_token(admin_client, records):
    _, session, _ = records
    response = admin_client.get(f"/admin/authservice/session/{session.pk}/change/")
    assert response.status_code == 200
    assert b"agent/1" in response.content
    assert session.token.encode() not in response.content


def test_the_account_change_page_does_not_show_provider_tokens(admin_client, records):
    _, _, account = records
    response = admin_client.get(f"/admin/authservice/account/{account.pk}/change/")
    assert response.status_code == 200
    assert b"gh-42" in response.content
    for secret in SECRETS:
        assert secret not in response.content


def test_the_user_change_page_shows_no_secret_and_no_password_hash(admin_client, records):
    user, _, _ = records
    response = admin_client.get(f"/admin/authservice/user/{user.pk}/change/")
    assert response.status_code == 200
    assert b"ada@example.com" in response.content
    for secret in SECRETS:
        assert secret not in response.content
    assert user.password.split("$")[-1].encode() not in response.content


def test_an_admin_can_revoke_a_session_by_deleting_it(admin_client, records):
    _, session, _ = records
    response = admin_client.post(f"/admin/authservice/session/{session.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Session.objects.filter(pk=session.pk).exists()


def test_the_user_search_works(admin_client, records):
    response = admin_client.get("/admin/authservice/user/", {"q": "ada"})
    assert response.status_code == 200
    assert b"ada@example.com" in response.content


def test_a_superuser_can_add_a_user(admin_client):
    response = admin_client.post("/admin/authservice/user/add/", {
        "email": "new@example.com", "name": "New", "password1": "a-Long-passw0rd!",
        "password2": "a-Long-passw0rd!", "usable_password": "true",
        # The (read-only) account, session and passkey inlines' management forms.
        **{f"{prefix}-{key}": value for prefix in ("auth_accounts", "auth_sessions", "auth_passkeys")
           for key, value in (("TOTAL_FORMS", "0"), ("INITIAL_FORMS", "0"))}})
    assert response.status_code == 302, response.content[:2000]
    assert get_user_model().objects.get(email="new@example.com").check_password("a-Long-passw0rd!")


def test_an_anonymous_visitor_is_sent_to_the_login_page(db):
    response = Client().get("/admin/authservice/session/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def _add_user(admin_client, email):
    return admin_client.post("/admin/authservice/user/add/", {
        "email": email, "name": "New", "password1": "a-Long-passw0rd!", "password2": "a-Long-passw0rd!",
        "usable_password": "true",
        **{f"{prefix}-{key}": "0" for prefix in ("auth_accounts", "auth_sessions", "auth_passkeys")
           for key in ("TOTAL_FORMS", "INITIAL_FORMS")}})


def test_a_user_added_in_the_admin_has_a_lower_cased_email(admin_client):
    _add_user(admin_client, "New.Person@Example.COM")
    assert get_user_model().objects.filter(email="new.person@example.com").exists()


def test_a_user_added_in_the_admin_can_sign_in_with_the_password(admin_client):
    from tests.conftest import ApiClient

    _add_user(admin_client, "new@example.com")
    response = ApiClient().api_post("/sign-in/email", {"email": "new@example.com",
                                                       "password": "a-Long-passw0rd!"})
    assert response.status_code == 200
