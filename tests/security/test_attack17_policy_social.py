"""Attack 17 (policy): the second factor skipped through social sign-in. better-auth opens a session
here; we don't: a user with 2FA gets the same pending sign-in /sign-in/email makes, and the SPA is sent
to its callbackURL with twoFactorRedirect=true, where twoFactorClient's verify call finishes it."""

import pytest

from authservice import users
from authservice.models import Session, TwoFactorChallenge
from tests.conftest import ApiClient, error_of
from tests.peers.social import _stub_server, corp, sign_in_with_corp, stub  # noqa: F401 - fixtures
from tests.two_factor_support import code, enrolled  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def victim(enrolled):
    """ada@example.com with TOTP on, a verified e-mail (so corp's identity links to her)."""
    users.update(enrolled.user, email_verified=True)
    Session.objects.filter(user=enrolled.user).delete()
    return enrolled


def test_social_sign_in_of_a_user_with_2fa_opens_no_session(victim, corp):
    attacker = ApiClient()
    sign_in_with_corp(attacker, corp, sub="sub-ada")
    assert not Session.objects.filter(user=victim.user).exists()
    assert attacker.api_get("/get-session").json() is None


def test_the_redirect_carries_two_factor_redirect(victim, corp):
    response = sign_in_with_corp(ApiClient(), corp, sub="sub-ada")
    assert response.status_code == 302
    assert response["Location"] == "/dashboard?twoFactorRedirect=true"


def test_it_creates_the_pending_challenge_and_its_cookie(victim, corp):
    browser = ApiClient()
    response = sign_in_with_corp(browser, corp, sub="sub-ada")
    assert TwoFactorChallenge.objects.filter(user=victim.user).count() == 1
    assert "auth.two_factor" in response.cookies and "auth.session_token" not in response.cookies


def test_verify_totp_then_finishes_the_social_sign_in(victim, corp):
    browser = ApiClient()
    sign_in_with_corp(browser, corp, sub="sub-ada")
    response = browser.api_post("/two-factor/verify-totp", {"code": code(victim.secret)})
    assert response.status_code == 200
    assert browser.api_get("/get-session").json()["user"]["email"] == victim.user.email


def test_a_wrong_code_finishes_nothing(victim, corp):
    browser = ApiClient()
    sign_in_with_corp(browser, corp, sub="sub-ada")
    wrong = "000000" if code(victim.secret) != "000000" else "111111"
    assert error_of(browser.api_post("/two-factor/verify-totp", {"code": wrong}))["code"] == "INVALID_CODE"
    assert not Session.objects.filter(user=victim.user).exists()


def test_a_trusted_device_skips_the_second_factor_as_on_password_sign_in(victim, corp):
    browser = ApiClient()
    sign_in_with_corp(browser, corp, sub="sub-ada")
    browser.api_post("/two-factor/verify-totp", {"code": code(victim.secret), "trustDevice": True})
    browser.cookies.pop("auth.session_token")
    response = sign_in_with_corp(browser, corp, sub="sub-ada")
    assert response["Location"] == "/dashboard"
    assert browser.api_get("/get-session").json()["user"]["email"] == victim.user.email


def test_an_id_token_sign_in_answers_two_factor_redirect(victim, corp):
    token = corp.key.sign(corp.claims(None, sub="sub-ada"))
    response = ApiClient().api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token}})
    assert response.json() == {"twoFactorRedirect": True, "twoFactorMethods": ["totp"]}
    assert not Session.objects.filter(user=victim.user).exists()
