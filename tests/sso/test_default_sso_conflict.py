"""A database row with the id of a whole default_sso item (a "shadowed row") fails closed (I1; attack 14d).

While the row exists the settings provider is refused wherever a flow would use it (409
PROVIDER_ID_CONFLICT and an error line for the operator), the row stays ignored (no sign-in, no SCIM),
listings and start-up checks do not fail, the system check sso.E019 names the row, and deleting the
row, by any path, deletes the accounts linked through it.
"""

import logging
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.db import ProgrammingError
from django.urls import reverse

from authservice.models import Account
from sso import checks, default_provider_checks, default_providers
from sso.admin import SsoProviderForm
from sso.models import Organization, SsoProvider
from sso.scim import tokens
from tests.conftest import error_of
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import authorize_params

pytestmark = pytest.mark.django_db

BASE = "/api/auth"


@pytest.fixture
def corp(stub_idp, configure_sso):
    """The settings provider ``corp`` (OIDC, corp.com) and nothing else."""
    configure_sso(default_sso=[{"providerId": "corp", "domain": "corp.com", "issuer": stub_idp.issuer,
                                "oidcConfig": stub_idp.oidc_config()}], scim={"enabled": True})
    return stub_idp


def shadow(make_user, provider_id="corp", **fields):
    fields.setdefault("domain", "evil.com")
    return SsoProvider.objects.create(provider_id=provider_id, issuer="https://idp.evil.com", domain_verified=True,
                                      oidc_config={"clientId": "evil", "clientSecret": "evil-secret"},
                                      user=make_user(email=f"owner-{provider_id}@evil.com"), **fields)


def conflict(response):
    assert response.status_code == 409, response.content
    assert error_of(response)["code"] == "PROVIDER_ID_CONFLICT"
    return True


def start(api, **body):
    return api.api_post("/sign-in/sso", {"callbackURL": "/dashboard", **body})


# --- the settings provider is refused on every entry point -----------------------------------------
@pytest.mark.parametrize("body", [{"providerId": "corp"}, {"domain": "corp.com"}, {"email": "ada@corp.com"},
                                  {"email": "ada@eng.corp.com"}], ids=["id", "domain", "email", "subdomain"])
def test_sign_in_to_a_settings_provider_with_a_shadowed_row_is_a_conflict(api, corp, make_user, body, caplog):
    shadow(make_user)
    with caplog.at_level(logging.ERROR, logger="sso"):
        assert conflict(start(api, **body))
    assert any("Delete that row" in record.getMessage() and "corp" in record.getMessage()
               for record in caplog.records)
    assert "evil-secret" not in caplog.text  # I10


def test_a_row_for_the_domain_is_not_the_fallback_of_a_refused_settings_provider(api, corp, make_user):
    shadow(make_user)
    SsoProvider.objects.create(provider_id="other", issuer="https://idp.other.com", domain="corp.com",
                               domain_verified=True, oidc_config={"clientId": "o"}, user=make_user(email="o@x.com"))
    assert conflict(start(api, email="ada@corp.com"))


@pytest.mark.parametrize("shared", [False, True], ids=["per-provider", "shared"])
def test_both_oidc_callbacks_refuse_a_state_once_a_shadowed_row_appears(api, corp, make_user, configure_sso,
                                                                         shared):
    if shared:
        configure_sso(redirect_uri="/sso/callback")
    started = start(api, providerId="corp", errorCallbackURL="/oops")
    params = authorize_params(started.json()["url"])
    corp.id_token = corp.sign(corp.claims(params["nonce"], email="ada@corp.com"))
    shadow(make_user)  # e.g. created in the admin or a shell while the sign-in was under way
    path = f"{BASE}/sso/callback" if shared else f"{BASE}/sso/callback/corp"
    query = {"code": "c", "state": params["state"], **({"iss": corp.issuer} if shared else {})}
    assert conflict(api.get(path, query))
    assert not corp.token_requests
    assert not Account.objects.filter(provider_id="corp").exists()


@pytest.fixture
def saml_corp(configure_sso, pem_cert):
    configure_sso(default_sso=[{"providerId": "corp", "domain": "corp.com", "issuer": "https://idp.corp.com",
                                "samlConfig": {"entryPoint": "https://idp.corp.com/sso", "cert": pem_cert}}])


def test_the_acs_and_sp_metadata_of_a_settings_provider_with_a_shadowed_row_are_a_conflict(api, saml_corp,
                                                                                            make_user):
    assert api.api_get("/sso/saml2/sp/metadata", {"providerId": "corp", "format": "xml"}).status_code == 200
    shadow(make_user)
    assert conflict(api.api_get("/sso/saml2/sp/metadata", {"providerId": "corp", "format": "xml"}))
    response = api.post(f"{BASE}/sso/saml2/callback/corp", "SAMLResponse=PHNhbWxwOlJlc3BvbnNlLz4%3D",
                        content_type="application/x-www-form-urlencoded", HTTP_ORIGIN="https://idp.corp.com")
    assert conflict(response)


def test_listing_and_start_up_checks_do_not_fail_on_a_conflict(corp, signed_in):
    shadow_row = SsoProvider.objects.create(provider_id="corp", issuer="https://idp.evil.com", domain="evil.com",
                                            oidc_config={"clientId": "e"}, user=signed_in.user)
    assert default_provider_checks.problems() == []
    assert default_providers.build(default_providers.items()[0]).provider_id == "corp"
    assert list(default_providers.shadowed_rows().values_list("id", flat=True)) == [shadow_row.pk]
    assert signed_in.api_get("/sso/providers").status_code == 200


# --- the row stays ignored ------------------------------------------------------------------------------
def test_the_shadowed_row_starts_no_sign_in_by_organization_slug_or_its_own_domain(api, corp, make_user):
    org = Organization.objects.create(name="Evil", slug="evilorg")
    shadow(make_user, organization_id=org.pk)
    response = start(api, organizationSlug="evilorg")
    assert response.status_code == 404 and error_of(response)["code"] == "PROVIDER_NOT_FOUND"
    response = start(api, email="mallory@evil.com")
    assert response.status_code == 404 and error_of(response)["code"] == "PROVIDER_NOT_FOUND"


def test_the_shadowed_rows_scim_token_is_refused_until_the_settings_item_goes(corp, make_user, configure_sso):
    _, token = tokens.issue(shadow(make_user))
    assert tokens.authenticate(f"Bearer {token}") is None
    configure_sso(default_sso=[])
    assert tokens.authenticate(f"Bearer {token}") is not None  # the id, not the row, decides


@pytest.mark.parametrize("argv", [["scim_token", "corp", "--revoke"], ["sso_verify_domain", "corp"],
                                  ["sso_refresh_metadata", "corp"]], ids=["scim-revoke", "verify", "refresh"])
def test_commands_refuse_a_settings_providers_id(corp, make_user, argv):
    shadow(make_user)
    with pytest.raises(CommandError, match="PROVIDER_FROM_SETTINGS"):
        call_command(*argv)


def test_the_admin_form_refuses_a_settings_providers_id(corp, make_user):
    form = SsoProviderForm(data={"provider_id": "corp", "issuer": "https://idp.x.com", "domain": "x.com",
                                 "user": make_user(email="a@x.com").pk, "oidc_config": '{"clientId": "x"}'})
    assert not form.is_valid() and "provider_id" in form.errors


# --- deleting the row deletes its accounts, on every path ----------------------------------------------
def linked_accounts(make_user):
    user = make_user(email="mallory-sso@evil.com")
    Account.objects.create(user=user, provider_id="corp", account_id="victim-sub")
    Account.objects.create(user=user, provider_id="other", account_id="kept")
    return user


def delete_in_admin(admin_client, row):
    url = reverse("admin:sso_ssoprovider_delete", args=[row.pk])
    assert admin_client.get(url).status_code == 200  # the confirmation page, not a permission refusal
    assert admin_client.post(url, {"post": "yes"}).status_code == 302


def bulk_delete_in_admin(admin_client, row):
    response = admin_client.post(reverse("admin:sso_ssoprovider_changelist"),
                                 {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"})
    assert response.status_code == 302


@pytest.mark.parametrize("how", ["instance", "queryset", "admin", "admin-bulk"])
def test_deleting_the_row_deletes_its_accounts_and_the_settings_provider_works_again(
        api, corp, make_user, admin_client, how):
    row = shadow(make_user)
    user = linked_accounts(make_user)
    _, token = tokens.issue(row)
    {"instance": lambda: row.delete(),
     "queryset": lambda: SsoProvider.objects.filter(provider_id="corp").delete(),
     "owner-deleted": lambda: row.user.delete(),
     "admin": lambda: delete_in_admin(admin_client, row),
     "admin-bulk": lambda: bulk_delete_in_admin(admin_client, row)}[how]()
    assert not SsoProvider.objects.filter(provider_id="corp").exists()
    assert not Account.objects.filter(provider_id="corp").exists()
    assert Account.objects.filter(user=user, provider_id="other").exists()
    assert tokens.authenticate(f"Bearer {token}") is None  # the connection went with the row
    assert start(api, providerId="corp").status_code == 200


def test_deleting_the_owner_of_a_shadowed_row_is_refused_until_the_row_is_deleted(corp, make_user):
    # The owner's deletion cascades to the row, and a row in conflict goes only by the operator's
    # deletion of the row itself (sso/row_deletion.py; attack pass 14f).
    from django.db import transaction

    from authservice.errors import APIError

    row = shadow(make_user)
    linked_accounts(make_user)
    with pytest.raises(APIError), transaction.atomic():
        row.user.delete()
    assert SsoProvider.objects.filter(pk=row.pk).exists()
    assert Account.objects.filter(provider_id="corp").exists()


# --- the system check -------------------------------------------------------------------------------
def test_the_system_check_names_each_shadowed_row(corp, make_user):
    row = shadow(make_user)
    shadow(make_user, provider_id="unrelated")
    found = checks.check_shadowed_rows(None, databases=["default"])
    assert [(problem.id, problem.obj) for problem in found] == [("sso.E019", "corp")]
    assert row.pk in found[0].msg and "Delete the row" in found[0].hint
    assert checks.check_shadowed_rows(None) == []  # not asked for a database: no query


def test_the_system_check_is_quiet_without_settings_items_or_before_migrate(make_user, configure_sso):
    shadow(make_user)
    assert checks.check_shadowed_rows(None, databases=["default"]) == []
    configure_sso(default_sso=[{"providerId": "corp", "domain": "corp.com", "issuer": "https://i",
                                "oidcConfig": {"clientId": "c"}}])
    with mock.patch.object(default_providers, "shadowed_rows", side_effect=ProgrammingError("no such table")):
        assert checks.check_shadowed_rows(None, databases=["default"]) == []
