"""Attack 14e: renaming a shadowed row in the Django admin keeps the links it made (I1).

docs/sso-options.md ("Providers from settings"): while a row has the id of a settings provider both are
refused; "deleting the row (any path) deletes the accounts linked through it", because SSO accounts are
keyed by ``(provider_id, account_id)`` only and must not carry over to the operator's provider. The admin
change form refuses renaming a row *to* a settings id (``SsoProviderForm.clean_provider_id``) but lets the
operator rename the shadowed row *away* from it: a natural way to "resolve" sso.E019 that keeps the row
and its owner. The row is gone from the id, the conflict ends, but the accounts keyed by the old id stay
behind and the settings provider inherits them: the attacker's pre-hijack of the victim survives (the
very scenario of test_attack14d_default_sso_shadowed_accounts.py, which deletion fixed).

Mechanism: sso/row_deletion.py acts on ``post_delete`` only; nothing acts when ``provider_id`` changes
(sso/admin.py SsoProviderForm, sso/models.py SsoProvider.save).

The fix makes a saved row's ``provider_id`` immutable (``SsoProvider.save`` refuses a change; the admin
shows it read-only on the change form). The attack is unchanged; its outcome changes on purpose: the
operator's rename leaves the id as it was, the settings provider stays refused (409) until the row is
deleted, and the deletion takes the attacker's links along (as test_attack14d_default_sso_shadowed_accounts).
"""

import pytest
from django.urls import reverse

from authservice.models import Account
from sso.models import SsoProvider
from tests.conftest import ApiClient
from tests.security.test_attack14d_default_sso_shadowed_accounts import (  # noqa: F401 - fixtures
    VICTIM_SUB, attacker_session, error_of_redirect, idps, operator_resolves_the_conflict, register_corp_row,
    session_email, settings_item, sso_sign_in,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures

pytestmark = pytest.mark.django_db


def rename_in_admin(admin_client, row, new_id):
    """The operator edits the row in the admin change form and gives it another provider_id."""
    url = reverse("admin:sso_ssoprovider_change", args=[row.pk])
    assert admin_client.get(url).status_code == 200
    data = {"provider_id": new_id, "issuer": row.issuer, "domain": row.domain, "user": row.user_id,
            "organization_id": "", "domain_verified": "on" if row.domain_verified else "",
            "organization_provisioning": "", "oidc_config": '{"clientId": "%s"}' % row.oidc_config["clientId"],
            "client_secret": "", "saml_config": ""}
    data = {key: value for key, value in data.items() if value != ""}
    return admin_client.post(url, data)


def test_a_pre_hijack_through_the_shadowed_row_survives_an_admin_rename(
        api, idps, make_user, configure_sso, admin_client):
    honest, evil = idps
    configure_sso(domain_verification={"enabled": False}, account_linking={"trust_email_verified": False})
    attacker = attacker_session(make_user)
    register_corp_row(attacker, evil)
    mallory_browser = ApiClient()
    sso_sign_in(mallory_browser, evil, sub=VICTIM_SUB, email="ada@corp.com", email_verified=False)
    assert session_email(mallory_browser) == "ada@corp.com"  # the attacker's pre-hijacked account
    configure_sso(default_sso=[settings_item(honest)])
    row = SsoProvider.objects.get(provider_id="corp")
    # The operator tries to resolve sso.E019 by renaming the row: the id is read-only, the rest is saved.
    response = rename_in_admin(admin_client, row, "corp-old")
    assert response.status_code == 302, response.content[:2000]
    assert SsoProvider.objects.get(pk=row.pk).provider_id == "corp"  # before the fix: renamed, links left behind
    assert not SsoProvider.objects.filter(provider_id="corp-old").exists()
    operator_resolves_the_conflict(api)  # still 409 PROVIDER_ID_CONFLICT; deleted, its accounts with it
    # The victim signs in at the company's IdP through the settings provider.
    response = sso_sign_in(api, honest, sub=VICTIM_SUB, email="ada@corp.com")
    # Secure outcome (as after a deletion): the link the attacker's IdP made is gone, the victim is not
    # signed into the account the attacker still has a session in.
    assert error_of_redirect(response) == "account not linked", (response["Location"], session_email(api))
    assert not Account.objects.filter(provider_id="corp").exists()
