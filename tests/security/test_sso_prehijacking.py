"""I1: an SSO provider vouches only for the e-mail domains it verified (F9, pre-hijacked accounts).

The attacker signs up, registers an SSO provider and verifies his own domain, ``attacker.test``. His
IdP then asserts someone else's address. Before issue 12 that created the victim's account (marked
verified), or linked the victim's existing account, so that the attacker kept a way in after the
victim "recovered" it (Sudhodanan & Paverd, USENIX Security 2022). With domain verification on, the
one external-identity flow now refuses with the catalogued ``email_domain_not_trusted``: no user, no
link, no session. Real peers: the npm oidc-provider OP, a stub token endpoint whose ID tokens we sign,
and the samlify IdP.
"""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account, Session
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, sign_in  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import (  # noqa: F401 - fixtures
    authorize_params, callback_path, make_provider, oidc_op, op_login, stub_idp, trusted_op,
)
from tests.sso.saml.conftest import (  # noqa: F401 - fixtures
    browser, post_acs, saml_idp, saml_keys, saml_owner, saml_provider, session_user, user_for,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

REFUSED = "email_domain_not_trusted"
# What still works (a provider's own domains, the per-provider opt-out, verification off) is pinned in
# tests/sso/test_oidc_callback.py, since it passed before the fix too.
VICTIM = "ada@acme.com"  # an account the OP signs in; the attacker's provider is verified for attacker.test


def query_of(response):
    assert response.status_code == 302, response.content
    return {key: values[-1] for key, values in parse_qs(urlsplit(response["Location"]).query).items()}


@pytest.fixture
def attacker_provider(trusted_op, make_provider):
    """The attacker's provider: verified, but only for attacker.test; his OP asserts the victim."""
    return make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"), domain="attacker.test")


def sign_in_at_op(api, login=VICTIM):
    body = {"providerId": "acme", "callbackURL": "/dashboard", "errorCallbackURL": "/oops"}
    response = api.api_post("/sign-in/sso", body)
    assert response.status_code == 200, response.content
    return api.get(*callback_path(op_login(response.json()["url"], login)))


def no_session_for(email):
    return not Session.objects.filter(user__email=email).exists()


# --- OIDC ---------------------------------------------------------------------------------------------
def test_a_provider_verified_for_another_domain_creates_no_user(api, attacker_provider):
    response = sign_in_at_op(api)
    assert query_of(response) == {"error": REFUSED}
    assert response["Location"].startswith("/oops?")
    assert not get_user_model().objects.filter(email=VICTIM).exists()
    assert not Account.objects.filter(provider_id="acme").exists()
    assert "auth.session_token" not in api.cookies


def test_a_provider_verified_for_another_domain_never_links_the_existing_user(api, attacker_provider,
                                                                               make_user):
    victim = make_user(email=VICTIM, email_verified=True)
    response = sign_in_at_op(api)
    assert query_of(response) == {"error": REFUSED}
    assert not Account.objects.filter(provider_id="acme").exists()
    assert no_session_for(victim.email)


def test_an_account_linked_before_the_fix_gives_no_session(api, attacker_provider, make_user):
    victim = make_user(email=VICTIM, email_verified=True)
    Account.objects.create(user=victim, provider_id="acme", account_id=VICTIM)  # the OP's sub for Ada
    assert query_of(sign_in_at_op(api)) == {"error": REFUSED}
    assert no_session_for(victim.email)


def test_the_victims_own_sign_up_still_works_afterwards(api, attacker_provider):
    sign_in_at_op(api)
    response = api.api_post("/sign-up/email", {"email": VICTIM, "password": "a-long-password-1", "name": "Ada"})
    assert response.status_code == 200, response.content


def test_an_id_token_asserting_alice_at_victim_test_is_refused(api, stub_idp, make_provider):
    make_provider("evil", stub_idp.issuer, stub_idp.oidc_config(), domain="attacker.test")
    response = api.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/dashboard"})
    params = authorize_params(response.json()["url"])
    stub_idp.id_token = stub_idp.sign(stub_idp.claims(params["nonce"], email="alice@victim.test"))
    response = api.get("/api/auth/sso/callback/evil", {"code": "c", "state": params["state"]})
    assert query_of(response) == {"error": REFUSED}
    assert not get_user_model().objects.filter(email="alice@victim.test").exists()


def test_a_look_alike_suffix_is_not_a_subdomain(api, stub_idp, make_provider):
    make_provider("evil", stub_idp.issuer, stub_idp.oidc_config(), domain="victim.test")
    response = api.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/dashboard"})
    params = authorize_params(response.json()["url"])
    stub_idp.id_token = stub_idp.sign(stub_idp.claims(params["nonce"], email="alice@evilvictim.test"))
    response = api.get("/api/auth/sso/callback/evil", {"code": "c", "state": params["state"]})
    assert query_of(response) == {"error": REFUSED}


# --- SAML ---------------------------------------------------------------------------------------------
def saml_login(provider, browser, email):
    form = provider.idp_response(browser, user_for(email))
    return post_acs(browser, provider.provider_id, form.saml_response, form.relay_state)


def test_a_saml_provider_verified_for_another_domain_creates_no_user(saml_provider, browser):
    provider = saml_provider("evil-saml", domain="attacker.test")
    response = saml_login(provider, browser, "alice@victim.test")
    assert query_of(response)["error"] == REFUSED
    assert not get_user_model().objects.filter(email="alice@victim.test").exists()
    assert session_user(browser) is None


def test_a_saml_provider_verified_for_another_domain_never_links_the_existing_user(saml_provider, browser,
                                                                                    make_user):
    victim = make_user(email="alice@victim.test", email_verified=True)
    response = saml_login(saml_provider("evil-saml", domain="attacker.test"), browser, victim.email)
    assert query_of(response)["error"] == REFUSED
    assert not Account.objects.filter(provider_id="evil-saml").exists()
    assert no_session_for(victim.email)



def test_an_id_trusted_for_any_email_domain_cannot_be_registered_through_the_api(sign_in, configure_sso):
    """Whoever registered an opted-out id first would vouch for every address (I1)."""
    configure_sso(trust_any_email_domain=["corp-idp"])
    response = sign_in().api_post("/sso/register", skip_discovery_body("corp-idp"))
    assert response.status_code == 422
    assert error_of(response)["code"] == "PROVIDER_ID_RESERVED"
