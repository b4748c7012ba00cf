"""GET /list-accounts and POST /unlink-account (core.md §4.19, §6.3)."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from authservice import auth
from authservice.errors import APIError
from authservice.models import Account, Session
from tests.conftest import PASSWORD, ApiClient, error_of

WIRE_KEYS = {"id", "accountId", "providerId", "userId", "scopes", "createdAt", "updatedAt"}


def cookie_header(client):
    return "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())


def github_account(user, scope="read:user,user:email"):
    return Account.objects.create(
        user=user, provider_id="github", account_id="12345", scope=scope,
        access_token="gho_secret", refresh_token="ghr_secret", id_token="id.token.secret",
    )


def make_stale(client):
    Session.objects.filter(token=client.token).update(created_at=timezone.now() - timedelta(days=2))


# --- GET /list-accounts --------------------------------------------------------------------------
def test_lists_the_credential_account_with_no_scopes(signed_in):
    response = signed_in.api_get("/list-accounts")
    assert response.status_code == 200
    [account] = response.json()
    assert set(account) == WIRE_KEYS
    assert account["providerId"] == "credential"
    assert account["accountId"] == str(signed_in.user.pk)
    assert account["userId"] == str(signed_in.user.pk)
    assert account["scopes"] == []
    assert account["id"] == Account.objects.get(user=signed_in.user).pk


def test_dates_are_iso_with_milliseconds(signed_in):
    [account] = signed_in.api_get("/list-accounts").json()
    for key in ("createdAt", "updatedAt"):
        assert len(account[key]) == 24 and account[key].endswith("Z")


def test_stored_scopes_are_split_into_a_list(signed_in):
    github_account(signed_in.user)
    accounts = {a["providerId"]: a for a in signed_in.api_get("/list-accounts").json()}
    assert accounts["github"]["scopes"] == ["read:user", "user:email"]
    assert accounts["github"]["accountId"] == "12345"


def test_tokens_and_passwords_never_leave(signed_in):
    github_account(signed_in.user)
    text = signed_in.api_get("/list-accounts").content.decode()
    for secret in ("gho_secret", "ghr_secret", "id.token.secret", "password", "accessToken"):
        assert secret not in text


def test_other_users_accounts_are_not_listed(signed_in, make_user):
    github_account(make_user(email="grace@example.com"))
    assert [a["providerId"] for a in signed_in.api_get("/list-accounts").json()] == ["credential"]


def test_listing_works_on_a_stale_session(signed_in):
    make_stale(signed_in)
    assert signed_in.api_get("/list-accounts").status_code == 200


def test_listing_without_a_session_is_unauthorized(api, user):
    response = api.api_get("/list-accounts")
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHORIZED"


def test_in_process_list_user_accounts(signed_in):
    github_account(signed_in.user)
    result = auth.api.list_user_accounts(headers={"cookie": cookie_header(signed_in)})
    assert sorted(a["providerId"] for a in result) == ["credential", "github"]


# --- POST /unlink-account ------------------------------------------------------------------------
def test_unlinks_an_account_by_its_row_id(signed_in):
    github = github_account(signed_in.user)
    response = signed_in.api_post("/unlink-account", {"accountId": github.pk})
    assert response.status_code == 200
    assert response.json() == {"status": True}
    assert not Account.objects.filter(pk=github.pk).exists()
    assert Account.objects.filter(user=signed_in.user, provider_id="credential").exists()


def test_the_providers_account_id_is_not_the_row_id(signed_in):
    github_account(signed_in.user)
    response = signed_in.api_post("/unlink-account", {"accountId": "12345"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "ACCOUNT_NOT_FOUND"


def test_the_last_account_can_not_be_unlinked(signed_in):
    credential = Account.objects.get(user=signed_in.user)
    response = signed_in.api_post("/unlink-account", {"accountId": credential.pk})
    assert response.status_code == 400
    assert error_of(response) == {"message": "You can't unlink your last account",
                                  "code": "FAILED_TO_UNLINK_LAST_ACCOUNT", "status": 400}
    assert Account.objects.filter(pk=credential.pk).exists()


def test_the_last_account_rule_comes_before_the_lookup(signed_in):
    response = signed_in.api_post("/unlink-account", {"accountId": "no-such-account"})
    assert error_of(response)["code"] == "FAILED_TO_UNLINK_LAST_ACCOUNT"


def test_allow_unlinking_all_unlinks_the_last_account(signed_in, configure):
    configure(account_linking={"allow_unlinking_all": True})
    credential = Account.objects.get(user=signed_in.user)
    response = signed_in.api_post("/unlink-account", {"accountId": credential.pk})
    assert response.json() == {"status": True}
    assert not Account.objects.filter(user=signed_in.user).exists()


def test_an_unknown_account_is_not_found(signed_in):
    github_account(signed_in.user)
    response = signed_in.api_post("/unlink-account", {"accountId": "no-such-account"})
    assert response.status_code == 400
    assert error_of(response) == {"message": "Account not found", "code": "ACCOUNT_NOT_FOUND", "status": 400}


def test_another_users_account_is_not_found(signed_in, make_user):
    github_account(signed_in.user)
    foreign = Account.objects.get(user=make_user(email="grace@example.com"))
    response = signed_in.api_post("/unlink-account", {"accountId": foreign.pk})
    assert error_of(response)["code"] == "ACCOUNT_NOT_FOUND"
    assert Account.objects.filter(pk=foreign.pk).exists()


def test_unlinking_the_credential_account_ends_password_sign_in(signed_in):
    github_account(signed_in.user)
    credential = Account.objects.get(user=signed_in.user, provider_id="credential")
    signed_in.api_post("/unlink-account", {"accountId": credential.pk})
    assert not get_user_model().objects.get(pk=signed_in.user.pk).has_usable_password()
    response = ApiClient().api_post("/sign-in/email", {"email": signed_in.user.email, "password": PASSWORD})
    assert error_of(response)["code"] == "INVALID_EMAIL_OR_PASSWORD"


def test_unlinking_needs_a_fresh_session(signed_in):
    github = github_account(signed_in.user)
    make_stale(signed_in)
    response = signed_in.api_post("/unlink-account", {"accountId": github.pk})
    assert response.status_code == 403
    assert error_of(response) == {"message": "Session is not fresh", "code": "SESSION_NOT_FRESH",
                                  "status": 403}
    assert Account.objects.filter(pk=github.pk).exists()


def test_fresh_age_zero_lets_a_stale_session_unlink(signed_in, configure):
    configure(session={"fresh_age": 0})
    github = github_account(signed_in.user)
    make_stale(signed_in)
    assert signed_in.api_post("/unlink-account", {"accountId": github.pk}).status_code == 200


def test_unlinking_without_a_session_is_unauthorized(api, user):
    response = api.api_post("/unlink-account", {"accountId": "x"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHORIZED"


def test_a_missing_account_id_is_a_validation_error(signed_in):
    response = signed_in.api_post("/unlink-account", {})
    assert response.status_code == 400
    expected = "[body.accountId] Invalid input: expected string, received undefined"
    assert error_of(response)["message"] == expected


def test_in_process_unlink_of_the_last_account_raises(signed_in):
    credential = Account.objects.get(user=signed_in.user)
    with pytest.raises(APIError) as caught:
        auth.api.unlink_account(body={"accountId": credential.pk},
                                headers={"cookie": cookie_header(signed_in)})
    assert (caught.value.code, caught.value.status) == ("FAILED_TO_UNLINK_LAST_ACCOUNT", "BAD_REQUEST")
