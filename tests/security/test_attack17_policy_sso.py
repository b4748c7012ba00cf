"""Attack 17 (policy), the exemption: SSO sign-ins are not asked for a local second factor, by design.
The IdP owns MFA (docs/mfa.md), so an SSO session of a user named by two_factor.required_for is not
enrolment-pending, and an SSO sign-in of a user with 2FA is not sent to the two-factor step. Run
against a real OpenID provider (npm oidc-provider)."""

import pytest

from authservice import users
from authservice.models import Session, TwoFactorChallenge
from tests.conftest import ApiClient
from tests.sso.conftest import _sso_defaults  # noqa: F401 - autouse fixture
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import callback_path, op_login
from tests.two_factor_support import staff_required  # noqa: F401 - fixture

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

EMAIL = "ada@acme.com"


@pytest.fixture
def acme(trusted_op, make_provider):
    return make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"))


@pytest.fixture
def ada(make_user, staff_required):
    """A staff user of acme.com the policy names, verified (so the SSO identity links to her)."""
    return make_user(email=EMAIL, is_staff=True, email_verified=True)


def sso_sign_in(api):
    started = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard"})
    path, query = callback_path(op_login(started.json()["url"], EMAIL))
    return api.get(path, query)


def test_an_sso_session_is_recorded_as_sso(acme, ada):
    sso_sign_in(ApiClient())
    assert Session.objects.get(user=ada).sign_in_method == "sso"


def test_an_sso_session_of_a_required_user_is_not_enrolment_pending(acme, ada):
    browser = ApiClient()
    sso_sign_in(browser)
    assert browser.api_get("/list-sessions").status_code == 200


def test_an_sso_sign_in_of_a_user_with_2fa_opens_the_session_at_once(acme, ada):
    users.set_two_factor_enabled(ada, True)
    browser = ApiClient()
    response = sso_sign_in(browser)
    assert response.status_code == 302 and "twoFactorRedirect" not in response["Location"]
    assert not TwoFactorChallenge.objects.filter(user=ada).exists()
    assert browser.api_get("/get-session").json()["user"]["email"] == EMAIL


def test_the_same_user_signing_in_by_password_is_still_pending(acme, ada):
    from tests.two_factor_support import password_sign_in

    listed = password_sign_in(EMAIL).api_get("/list-sessions")
    assert listed.status_code == 403 and listed.json()["code"] == "TWO_FACTOR_ENROLLMENT_REQUIRED"
