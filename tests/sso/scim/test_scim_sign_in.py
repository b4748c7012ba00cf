"""A SCIM user's first SSO sign-in lands in the account SCIM made (the one identity flow links it by its
address in the provider's verified domain); a deactivated one gets no session from SSO nor password.
Real OpenID provider (npm oidc-provider) on loopback."""

from urllib.parse import parse_qs, urlsplit

import pytest

from authservice import users
from authservice.models import Account, Session
from tests.conftest import PASSWORD
from tests.sso.conftest_oidc import callback_path, make_provider, oidc_op, op_login, trusted_op  # noqa: F401
from tests.sso.scim.conftest import ScimClient, patch_body, user_body

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]


@pytest.fixture
def acme(trusted_op, make_provider):
    from sso.scim import tokens

    provider = make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"))
    _, token = tokens.issue(provider)
    return ScimClient(token)


def sso_sign_in(api):
    response = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard"})
    assert response.status_code == 200, response.content
    return api.get(*callback_path(op_login(response.json()["url"], "ada@acme.com")))


def error_of(response):
    return parse_qs(urlsplit(response["Location"]).query).get("error", [None])[-1]


def test_the_first_sso_sign_in_lands_in_the_scim_account(api, acme):
    created = acme.scim("POST", "/Users", user_body("ada@acme.com"))
    assert created.status_code == 201, created.content
    ada = users.find_by_email("ada@acme.com")
    response = sso_sign_in(api)
    assert error_of(response) is None, response["Location"]
    assert Session.objects.get().user_id == ada.pk
    assert Account.objects.get(provider_id="acme").user_id == ada.pk


def test_a_deactivated_scim_user_gets_no_sso_session(api, acme):
    created = acme.scim("POST", "/Users", user_body("ada@acme.com")).json()
    acme.scim("PATCH", f"/Users/{created['id']}", patch_body({"op": "replace", "path": "active", "value": False}))
    assert error_of(sso_sign_in(api)) == "user_inactive"
    assert not Session.objects.exists()


def test_a_deactivated_scim_user_gets_no_password_session(api, acme):
    created = acme.scim("POST", "/Users", user_body("ada@acme.com")).json()
    ada = users.find_by_email("ada@acme.com")
    ada.set_password(PASSWORD)  # the user set a password since (set-password after an SSO sign-in)
    ada.save()
    Account.objects.create(provider_id=Account.CREDENTIAL, account_id=str(ada.pk), user=ada)
    assert api.api_post("/sign-in/email", {"email": "ada@acme.com", "password": PASSWORD}).status_code == 200
    acme.scim("DELETE", f"/Users/{created['id']}")
    assert not Session.objects.filter(user=ada).exists()
    assert api.api_post("/sign-in/email", {"email": "ada@acme.com", "password": PASSWORD}).status_code != 200
