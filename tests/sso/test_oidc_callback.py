"""GET /sso/callback/:providerId against a real OpenID provider (npm oidc-provider) (sso.md §3, §6, §9).

The login at the OP is driven with real HTTP; our server talks to the OP's token, JWKS and userinfo
endpoints over real sockets.
"""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account, Session, Verification
from tests.conftest import ORIGIN, error_of
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import BASIC_SECRET, authorize_params, callback_path, op_login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]


@pytest.fixture
def acme(trusted_op, make_provider):
    return make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"))


def start(api, **body):
    body.setdefault("callbackURL", "/dashboard")
    response = api.api_post("/sign-in/sso", body)
    assert response.status_code == 200, response.content
    return response.json()["url"]


def sign_in_at_op(api, login="ada@acme.com", **body):
    """Start at /sign-in/sso, log in at the OP, and follow its redirect to our callback."""
    body.setdefault("providerId", "acme")
    location = op_login(start(api, **body), login)
    path, query = callback_path(location)
    return api.get(path, query)


def query_of(response):
    return {key: values[-1] for key, values in parse_qs(urlsplit(response["Location"]).query).items()}


def session_cookie(api):
    return api.cookies.get("auth.session_token")


# --- success ----------------------------------------------------------------------------------------
def test_a_new_user_is_created_signed_in_and_sent_to_the_new_user_url(api, acme):
    response = sign_in_at_op(api, newUserCallbackURL="/welcome")
    assert response.status_code == 302
    assert response["Location"] == "/welcome"
    user = get_user_model().objects.get(email="ada@acme.com")
    assert user.name == "Ada Lovelace"
    assert user.image == "https://img.acme.com/ada.png"
    assert not user.has_usable_password()
    session = Session.objects.get(user=user)
    assert session_cookie(api).value.startswith(session.token + ".")
    assert response.cookies["auth.state"]["max-age"] == 0


def test_the_new_session_is_a_working_session(api, acme):
    sign_in_at_op(api)
    response = api.api_get("/get-session")
    assert response.status_code == 200
    assert response.json()["user"]["email"] == "ada@acme.com"


def test_the_account_is_keyed_on_provider_and_subject_and_keeps_the_tokens(api, acme):
    sign_in_at_op(api)
    account = Account.objects.get(provider_id="acme")
    assert account.account_id == "ada@acme.com"  # the OP's sub for this login
    assert account.access_token and account.id_token
    assert account.access_token_expires_at is not None
    assert set(account.scope.split(",")) >= {"openid", "email", "profile"}


def test_a_returning_user_goes_to_the_callback_url_with_the_same_user_and_account(api, acme):
    sign_in_at_op(api, newUserCallbackURL="/welcome")
    first_token = Account.objects.get(provider_id="acme").access_token
    again = sign_in_at_op(api, newUserCallbackURL="/welcome")
    assert again["Location"] == "/dashboard"
    assert get_user_model().objects.count() == 2  # the provider's owner and Ada
    account = Account.objects.get(provider_id="acme")
    assert account.access_token != first_token  # tokens refreshed on every sign-in
    assert Session.objects.filter(user=account.user).count() == 2


def test_client_secret_post_authenticates_at_the_token_endpoint(api, trusted_op, make_provider):
    make_provider("acme-post", trusted_op.issuer, trusted_op.oidc_config("acme-post"))
    response = sign_in_at_op(api, providerId="acme-post")
    assert response["Location"] == "/dashboard"
    assert Account.objects.filter(provider_id="acme-post").exists()


def test_client_secret_basic_form_encodes_a_secret_with_reserved_characters(api, acme):
    assert ":" in BASIC_SECRET and "+" in BASIC_SECRET
    assert sign_in_at_op(api)["Location"] == "/dashboard"


def test_without_a_userinfo_endpoint_the_verified_id_token_claims_are_used(api, trusted_op, make_provider):
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme", userInfoEndpoint=None))
    sign_in_at_op(api)
    assert get_user_model().objects.get(email="ada@acme.com").name == "Ada Lovelace"


def test_endpoints_missing_from_the_config_are_discovered_at_sign_in(api, trusted_op, make_provider):
    config = trusted_op.oidc_config("acme", authorizationEndpoint=None, tokenEndpoint=None, jwksEndpoint=None)
    make_provider("acme", trusted_op.issuer, config)
    assert sign_in_at_op(api)["Location"] == "/dashboard"


def test_claims_are_mapped_as_the_provider_config_says(api, trusted_op, make_provider):
    mapping = {"email": "email", "name": "sub", "image": "none", "extraFields": {"teams": "groups"}}
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme", mapping=mapping,
                                                                    scopes=["openid", "email", "groups"]))
    sign_in_at_op(api)
    user = get_user_model().objects.get(email="ada@acme.com")
    assert user.name == "ada@acme.com"
    assert user.image is None


def test_the_idp_email_verified_claim_is_ignored_unless_trusted(api, acme):
    sign_in_at_op(api)
    assert get_user_model().objects.get(email="ada@acme.com").email_verified is False


def test_a_trusted_email_verified_claim_marks_the_new_user_verified(api, acme, configure_sso):
    configure_sso(account_linking={"trust_email_verified": True})
    sign_in_at_op(api)
    assert get_user_model().objects.get(email="ada@acme.com").email_verified is True


# --- linking (sso.md §6) ------------------------------------------------------------------------------
def test_an_existing_verified_user_is_linked_when_the_provider_domain_is_verified(api, acme, make_user):
    ada = make_user(email="ada@acme.com", email_verified=True)
    response = sign_in_at_op(api)
    assert response["Location"] == "/dashboard"
    assert Account.objects.get(provider_id="acme").user == ada
    assert Session.objects.filter(user=ada).exists()


def test_an_unverified_local_user_is_not_linked_and_gets_no_session(api, acme, make_user):
    make_user(email="ada@acme.com", email_verified=False)
    response = sign_in_at_op(api, errorCallbackURL="/oops")
    assert response["Location"] == "/oops?error=account+not+linked"
    assert not Account.objects.filter(provider_id="acme").exists()
    assert not Session.objects.exists()
    assert session_cookie(api) is None


def test_the_local_verification_requirement_can_be_switched_off(api, acme, make_user, configure_sso):
    configure_sso(account_linking={"require_local_email_verified": False})
    ada = make_user(email="ada@acme.com", email_verified=False)
    sign_in_at_op(api)
    assert Account.objects.get(provider_id="acme").user == ada


def test_an_unverified_provider_domain_never_links_to_an_existing_user(api, trusted_op, make_provider,
                                                                       make_user, configure_sso):
    configure_sso(domain_verification={"enabled": False})
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"), domain_verified=False)
    make_user(email="ada@acme.com", email_verified=True)
    response = sign_in_at_op(api)
    assert query_of(response) == {"error": "account not linked"}
    assert not Session.objects.exists()


def test_an_idp_email_verified_false_cannot_link_even_when_trusted(api, trusted_op, make_provider, make_user,
                                                                   configure_sso):
    configure_sso(domain_verification={"enabled": False}, account_linking={"trust_email_verified": True})
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"), domain_verified=False)
    victim = make_user(email="unverified@acme.com", email_verified=True)
    response = sign_in_at_op(api, login="unverified@acme.com")
    assert query_of(response) == {"error": "account not linked"}
    assert not Account.objects.filter(provider_id="acme").exists()
    assert not Session.objects.filter(user=victim).exists()


def test_a_trusted_verified_idp_email_links_without_domain_verification(api, trusted_op, make_provider,
                                                                        make_user, configure_sso):
    configure_sso(domain_verification={"enabled": False}, account_linking={"trust_email_verified": True})
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"), domain_verified=False)
    ada = make_user(email="ada@acme.com", email_verified=True)
    sign_in_at_op(api)
    assert Account.objects.get(provider_id="acme").user == ada


# --- e-mail domain trust (I1; the attacks are in tests/security/test_sso_prehijacking.py) -------------------
def test_a_provider_signs_in_users_of_any_of_its_verified_domains(api, trusted_op, make_provider):
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"), domain="attacker.test,acme.com")
    assert sign_in_at_op(api)["Location"] == "/dashboard"
    assert get_user_model().objects.filter(email="ada@acme.com").exists()


def test_a_deployment_may_trust_a_provider_for_any_email_domain(api, trusted_op, make_provider, configure_sso):
    configure_sso(trust_any_email_domain=["acme"])
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"), domain="attacker.test")
    assert sign_in_at_op(api)["Location"] == "/dashboard"
    assert get_user_model().objects.filter(email="ada@acme.com").exists()


def test_without_domain_verification_any_email_domain_signs_up(api, trusted_op, make_provider, configure_sso):
    configure_sso(domain_verification={"enabled": False})
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"), domain="attacker.test",
                  domain_verified=False)
    assert sign_in_at_op(api)["Location"] == "/dashboard"


def test_implicit_sign_up_can_be_disabled(api, acme, configure_sso):
    configure_sso(disable_implicit_sign_up=True)
    response = sign_in_at_op(api)
    assert query_of(response) == {"error": "signup disabled"}
    assert not get_user_model().objects.filter(email="ada@acme.com").exists()


def test_request_sign_up_creates_the_user_when_implicit_sign_up_is_disabled(api, acme, configure_sso):
    configure_sso(disable_implicit_sign_up=True)
    sign_in_at_op(api, requestSignUp=True)
    assert get_user_model().objects.filter(email="ada@acme.com").exists()


def test_an_identity_without_email_is_refused(api, acme):
    response = sign_in_at_op(api, login="noemail")
    assert query_of(response) == {"error": "invalid_provider", "error_description": "missing_user_info"}
    assert not Session.objects.exists()


# --- state (sso.md §3 step 1, §10.9) -------------------------------------------------------------------
def test_a_replayed_state_is_refused_and_creates_no_second_session(api, acme):
    location = op_login(start(api, providerId="acme"), "ada@acme.com")
    path, query = callback_path(location)
    api.get(path, query)
    replay = api.get(path, query)
    assert replay["Location"] == f"{ORIGIN}/api/auth/error?error=state_mismatch"
    assert Session.objects.count() == 1


def test_the_state_row_is_deleted_when_used(api, acme):
    sign_in_at_op(api)
    assert not Verification.objects.exists()


def test_a_state_issued_for_another_provider_is_refused(api, acme, trusted_op, make_provider):
    make_provider("acme-two", trusted_op.issuer, trusted_op.oidc_config("acme-two"))
    location = op_login(start(api, providerId="acme", errorCallbackURL="/oops"), "ada@acme.com")
    _, query = callback_path(location)
    response = api.get("/api/auth/sso/callback/acme-two", query)
    assert query_of(response) == {"error": "invalid_state",
                                  "error_description": "sso_provider_changed_during_authentication"}
    assert not Session.objects.exists()
    assert not get_user_model().objects.filter(email="ada@acme.com").exists()


def test_a_callback_without_the_state_cookie_is_refused(api, acme):
    location = op_login(start(api, providerId="acme", errorCallbackURL="/oops"), "ada@acme.com")
    api.cookies.pop("auth.state")
    response = api.get(*callback_path(location))
    assert response["Location"] == "/oops?error=state_mismatch"
    assert not Session.objects.exists()


def test_a_callback_without_state_goes_to_the_default_error_page(api, acme):
    response = api.get("/api/auth/sso/callback/acme", {"code": "x"})
    assert response["Location"] == f"{ORIGIN}/api/auth/error?error=state_not_found"


def test_an_unknown_state_is_a_mismatch(api, acme):
    response = api.get("/api/auth/sso/callback/acme", {"code": "x", "state": "A" * 32})
    assert response["Location"] == f"{ORIGIN}/api/auth/error?error=state_mismatch"


def test_a_provider_reconfigured_mid_flow_is_refused(api, acme):
    location = op_login(start(api, providerId="acme"), "ada@acme.com")
    acme.oidc_config = {**acme.oidc_config, "scopes": ["openid"]}
    acme.save()
    response = api.get(*callback_path(location))
    assert query_of(response)["error_description"] == "sso_provider_changed_during_authentication"
    assert not Session.objects.exists()


def test_an_idp_error_goes_to_the_error_callback_url_with_its_description(api, acme):
    url = start(api, providerId="acme", errorCallbackURL="http://127.0.0.1:8000/x#frag")
    state = authorize_params(url)["state"]
    response = api.get("/api/auth/sso/callback/acme", {"state": state, "error": "access_denied",
                                                      "error_description": "End-User aborted interaction"})
    assert response["Location"] == ("http://127.0.0.1:8000/x?error=access_denied"
                                    "&error_description=End-User+aborted+interaction#frag")


def test_an_aborted_login_at_the_op_comes_back_as_access_denied(api, acme):
    location = op_login(start(api, providerId="acme", errorCallbackURL="/oops"), "ada@acme.com", abort=True)
    response = api.get(*callback_path(location))
    assert query_of(response)["error"] == "access_denied"
    assert not Session.objects.exists()


def test_a_missing_code_is_invalid_request(api, acme):
    state = authorize_params(start(api, providerId="acme", errorCallbackURL="/oops"))["state"]
    response = api.get("/api/auth/sso/callback/acme", {"state": state})
    assert response["Location"] == "/oops?error=invalid_request&error_description=authorization_code_not_found"


def test_an_unverified_domain_at_the_callback_answers_json_401(api, trusted_op, make_provider, configure_sso):
    configure_sso(domain_verification={"enabled": False})
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"), domain_verified=False)
    location = op_login(start(api, providerId="acme"), "ada@acme.com")
    configure_sso(domain_verification={"enabled": True})
    response = api.get(*callback_path(location))
    assert response.status_code == 401
    assert error_of(response)["code"] == "DOMAIN_NOT_VERIFIED"
    assert not Session.objects.exists()
