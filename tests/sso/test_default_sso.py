"""Providers defined in settings (``AUTHSERVICE_SSO["default_sso"]``, better-auth's ``defaultSSO``;
issue 14 §5): sign-in through one against the real OpenID provider (npm oidc-provider), precedence
over database rows, the operator's ownership (management refused), I1 and the start-up check."""

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account, Session
from sso.checks import check_setting_values
from sso.default_providers import by_id
from tests.conftest import error_of
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import SHARED_CALLBACK, callback_path, op_login
from tests.sso.test_oidc_callback import query_of, start

pytestmark = [pytest.mark.django_db]


def item(op, provider_id="acme", domain="acme.com", **changes):
    """A whole default_sso item for one of the OP's clients, as an operator writes it."""
    config = op.oidc_config(provider_id)
    for key in ("discoveryEndpoint", "userInfoEndpoint"):
        config.pop(key)
    return {"providerId": provider_id, "domain": domain, "issuer": op.issuer, "oidcConfig": config, **changes}


def sign_in_at_op(api, login="ada@acme.com", callback_prefix=None, **body):
    location = op_login(start(api, **body), login, **({"callback_prefix": callback_prefix} if callback_prefix else {}))
    path, query = callback_path(location)
    return api.get(path, query)


def signed_in_account():
    return Account.objects.get(user__email="ada@acme.com")


@pytest.fixture
def from_settings(trusted_op, configure_sso):
    configure_sso(default_sso=[item(trusted_op)])
    return trusted_op


# --- sign-in ------------------------------------------------------------------------------------
@pytest.mark.e2e
def test_a_provider_from_settings_signs_in_by_provider_id_without_a_database_row(api, from_settings):
    response = sign_in_at_op(api, providerId="acme")
    assert response.status_code == 302 and response["Location"] == "/dashboard", response.get("Location")
    assert signed_in_account().provider_id == "acme"
    assert Session.objects.filter(user__email="ada@acme.com").exists()


@pytest.mark.e2e
def test_a_provider_from_settings_is_found_by_the_e_mail_domain_it_lists(api, from_settings):
    response = sign_in_at_op(api, email="ada@sub.acme.com")
    assert response["Location"] == "/dashboard", response.get("Location")
    assert signed_in_account().provider_id == "acme"


@pytest.mark.e2e
def test_a_provider_from_settings_completes_at_the_shared_callback(api, from_settings, configure_sso):
    configure_sso(redirect_uri="/sso/callback")
    response = sign_in_at_op(api, providerId="acme", callback_prefix=SHARED_CALLBACK)
    assert response["Location"] == "/dashboard", response.get("Location")
    assert signed_in_account().provider_id == "acme"


# --- precedence ---------------------------------------------------------------------------------
@pytest.mark.e2e
def test_a_row_with_the_settings_providers_id_fails_closed_until_deleted(api, from_settings, make_provider):
    """What the row made (accounts keyed by its id, its SCIM connection) must not carry over to the
    settings provider (attack 14d): refused while it exists (tests/sso/test_default_sso_conflict.py)."""
    row = make_provider("acme", from_settings.issuer, from_settings.oidc_config("acme", clientId="stale-client"))
    response = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard"})
    assert response.status_code == 409 and error_of(response)["code"] == "PROVIDER_ID_CONFLICT"
    row.delete()
    response = sign_in_at_op(api, providerId="acme")
    assert response["Location"] == "/dashboard", response.get("Location")  # the OP knows acme-client only


@pytest.mark.e2e
def test_the_settings_provider_takes_precedence_over_a_verified_row_for_its_domain(
        api, from_settings, make_provider):
    make_provider("acme-two", from_settings.issuer, from_settings.oidc_config("acme-two"), domain="acme.com")
    sign_in_at_op(api, email="ada@acme.com")
    assert signed_in_account().provider_id == "acme"


def test_a_row_shadowed_by_a_settings_provider_is_not_routed_to(api, trusted_op, make_provider, configure_sso):
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"), domain="legacy.com")
    configure_sso(default_sso=[item(trusted_op, domain="acme.com")])
    response = api.api_post("/sign-in/sso", {"email": "ada@legacy.com", "callbackURL": "/dashboard"})
    assert response.status_code == 404 and error_of(response)["code"] == "PROVIDER_NOT_FOUND"


# --- I1: the domains it lists, and only those -----------------------------------------------------
@pytest.mark.e2e
@pytest.mark.parametrize("verification", [True, False], ids=["verification-on", "verification-off"])
def test_a_settings_provider_creates_no_user_outside_the_domains_it_lists(
        api, trusted_op, configure_sso, verification):
    configure_sso(default_sso=[item(trusted_op, domain="other.com")],
                  domain_verification={"enabled": verification})
    response = sign_in_at_op(api, providerId="acme")
    assert "error" in query_of(response)
    assert not get_user_model().objects.filter(email="ada@acme.com").exists()
    assert not Session.objects.exists()


@pytest.mark.e2e
def test_a_settings_provider_links_no_existing_user_outside_the_domains_it_lists(
        api, trusted_op, configure_sso, make_user):
    victim = make_user(email="ada@acme.com", email_verified=True)
    configure_sso(default_sso=[item(trusted_op, domain="other.com")], domain_verification={"enabled": False},
                  account_linking={"trust_email_verified": True})
    response = sign_in_at_op(api, providerId="acme")
    assert "error" in query_of(response)
    assert not Account.objects.filter(user=victim, provider_id="acme").exists()
    assert not Session.objects.filter(user=victim).exists()


# --- the operator's, not the caller's --------------------------------------------------------------
@pytest.fixture
def owner_of_shadowed_row(signed_in, trusted_op, configure_sso):
    """A signed-in user who owns a row with the id of a settings provider."""
    from sso.models import SsoProvider
    SsoProvider.objects.create(provider_id="acme", issuer=trusted_op.issuer, domain="acme.com",
                               oidc_config=trusted_op.oidc_config("acme"), user=signed_in.user)
    configure_sso(default_sso=[item(trusted_op)])
    return signed_in


@pytest.mark.parametrize(("method", "path", "payload"), [
    ("get", "/sso/get-provider", {"providerId": "acme"}),
    ("post", "/sso/update-provider", {"providerId": "acme", "domain": "evil.com"}),
    ("post", "/sso/delete-provider", {"providerId": "acme"}),
    ("post", "/sso/request-domain-verification", {"providerId": "acme"}),
    ("post", "/sso/verify-domain", {"providerId": "acme"}),
], ids=["get", "update", "delete", "request-verification", "verify-domain"])
def test_management_endpoints_refuse_a_settings_provider(owner_of_shadowed_row, method, path, payload):
    api = owner_of_shadowed_row
    response = api.api_get(path, payload) if method == "get" else api.api_post(path, payload)
    assert response.status_code == 403, response.content
    assert error_of(response)["code"] == "PROVIDER_FROM_SETTINGS"


def test_registering_the_id_of_a_settings_provider_is_refused(signed_in, trusted_op, configure_sso):
    configure_sso(default_sso=[item(trusted_op)])
    response = signed_in.api_post("/sso/register", {"providerId": "acme", "issuer": trusted_op.issuer,
                                                    "domain": "acme.com", "oidcConfig": {"clientId": "x"}})
    assert response.status_code == 422 and error_of(response)["code"] == "PROVIDER_ID_RESERVED"


def test_a_settings_provider_cannot_be_saved_or_deleted(from_settings):
    provider = by_id("acme")
    with pytest.raises(TypeError):
        provider.save()
    with pytest.raises(TypeError):
        provider.delete()


def test_an_item_without_a_domain_is_no_provider_of_its_own(configure_sso):
    configure_sso(default_sso=[{"providerId": "acme", "oidcConfig": {"privateKey": "k"}}])
    assert by_id("acme") is None


# --- the start-up check -------------------------------------------------------------------------
def e018(configure_sso, *items):
    configure_sso(default_sso=list(items))
    return [problem for problem in check_setting_values() if problem.id == "sso.E018"]


def test_a_valid_settings_provider_passes_the_check(trusted_op, configure_sso):
    assert e018(configure_sso, item(trusted_op)) == []


@pytest.mark.parametrize(("changes", "code"), [
    ({"oidcConfig": None}, "Provide either oidcConfig or samlConfig"),
    ({"samlConfig": {"entryPoint": "https://idp.example/sso"}}, "Provide either oidcConfig or samlConfig"),
    ({"providerId": "google"}, "PROVIDER_ID_RESERVED"),
    ({"providerId": "a.b"}, "INVALID_PROVIDER_ID"),
    ({"domain": "not a domain!"}, "names no valid hostname"),
    ({"issuer": "javascript:alert(1)"}, "issuer"),
], ids=["no-config", "both-configs", "reserved-id", "dotted-id", "bad-domain", "bad-issuer"])
def test_an_item_registration_would_refuse_is_a_start_up_error(trusted_op, configure_sso, changes, code):
    bad = {key: value for key, value in {**item(trusted_op), **changes}.items() if value is not None}
    problems = e018(configure_sso, bad)
    assert len(problems) == 1 and code in problems[0].msg, [p.msg for p in problems]


def test_an_oidc_item_without_a_client_secret_is_a_start_up_error(trusted_op, configure_sso):
    bad = item(trusted_op)
    del bad["oidcConfig"]["clientSecret"]
    [problem] = e018(configure_sso, bad)
    assert "CLIENT_SECRET_REQUIRED" in problem.msg


def test_a_saml_item_without_an_entry_point_is_a_start_up_error(configure_sso):
    [problem] = e018(configure_sso, {"providerId": "corp", "domain": "corp.com", "issuer": "https://sp.example",
                                     "samlConfig": {"idpMetadata": {"entityID": "https://idp.example"}}})
    assert "SAML_ENTRY_POINT_REQUIRED" in problem.msg


def test_two_items_with_one_id_are_a_start_up_error(trusted_op, configure_sso):
    [problem] = e018(configure_sso, item(trusted_op), item(trusted_op, domain="acme.org"))
    assert "[1]" in problem.msg and "PROVIDER_ID_EXISTS" in problem.msg
