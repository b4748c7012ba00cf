"""Linking a SAML identity to an existing user (sso.md §6): the same rules as OIDC, refusals sent to the
success URL with an underscore error (§9)."""

from django.contrib.auth import get_user_model

from authservice.models import Account
from tests.sso.saml.conftest import post_acs, session_user, user_for


def _login(provider, browser, user=None, **body):
    form = provider.idp_response(browser, user or user_for(), **body)
    return post_acs(browser, provider.provider_id, form.saml_response, form.relay_state)


def test_a_verified_local_user_is_linked_through_a_verified_domain(saml_provider, make_user, browser):
    local = make_user(email="ada@acme.com", email_verified=True)
    provider = saml_provider("acme-saml")
    response = _login(provider, browser)
    assert response["Location"] == "/dashboard"
    assert session_user(browser)["id"] == str(local.pk)
    assert Account.objects.filter(user=local, provider_id="acme-saml", account_id="ada@acme.com").exists()


def test_a_subdomain_email_is_covered_by_the_verified_domain(saml_provider, make_user, browser):
    local = make_user(email="ada@eu.acme.com", email_verified=True)
    provider = saml_provider("acme-saml")
    response = _login(provider, browser, user_for("ada@eu.acme.com"))
    assert response["Location"] == "/dashboard"
    assert session_user(browser)["id"] == str(local.pk)


def test_an_unverified_local_email_is_not_linked(saml_provider, make_user, browser):
    make_user(email="ada@acme.com", email_verified=False)
    provider = saml_provider("acme-saml")
    response = _login(provider, browser)
    assert response["Location"] == "/dashboard?error=account_not_linked"
    assert session_user(browser) is None
    assert not Account.objects.filter(provider_id="acme-saml").exists()


def test_the_local_verification_rule_can_be_turned_off(saml_provider, make_user, browser, configure_sso):
    configure_sso(account_linking={"require_local_email_verified": False})
    local = make_user(email="ada@acme.com", email_verified=False)
    response = _login(saml_provider("acme-saml"), browser)
    assert response["Location"] == "/dashboard"
    assert session_user(browser)["id"] == str(local.pk)


def test_an_email_outside_the_provider_domains_is_not_linked(saml_provider, make_user, browser):
    make_user(email="ada@other.com", email_verified=True)
    response = _login(saml_provider("acme-saml"), browser, user_for("ada@other.com"))
    # I1 (issue 12): the provider is not trusted for other.com at all, so the refusal says so.
    assert response["Location"] == "/dashboard?error=email_domain_not_trusted"
    assert session_user(browser) is None


def test_without_domain_verification_only_a_trusted_verified_email_links(saml_provider, make_user, browser,
                                                                         configure_sso):
    configure_sso(domain_verification={"enabled": False})
    make_user(email="ada@acme.com", email_verified=True)
    provider = saml_provider("acme-saml", verified=False,
                             mapping={"email": "email", "name": "displayName", "emailVerified": "verified"})
    user = user_for()
    user["attributes"]["verified"] = "true"
    assert _login(provider, browser, user)["Location"] == "/dashboard?error=account_not_linked"
    configure_sso(account_linking={"trust_email_verified": True})
    assert _login(provider, browser, user)["Location"] == "/dashboard"


def test_implicit_sign_up_can_be_disabled(saml_provider, browser, configure_sso):
    configure_sso(disable_implicit_sign_up=True)
    provider = saml_provider("acme-saml")
    assert _login(provider, browser)["Location"] == "/dashboard?error=signup_disabled"
    assert not get_user_model().objects.filter(email="ada@acme.com").exists()


def test_request_sign_up_overrides_disabled_implicit_sign_up(saml_provider, browser, configure_sso):
    configure_sso(disable_implicit_sign_up=True)
    provider = saml_provider("acme-saml")
    assert _login(provider, browser, requestSignUp=True)["Location"] == "/dashboard"
    assert session_user(browser)["email"] == "ada@acme.com"
