"""I5: a provider's identity cannot change while users are linked to it, and it is compared after fetching.

The identity is the entity ID, the signing keys and where they come from (``idpMetadata.url``). The
attacker owns a SAML provider with linked users. Editing the certificate answers 409, so they point
``idpMetadata.url`` at a document of their own, or change the document behind the URL and wait for the
metadata refresh; either way their key would then sign assertions for the linked users.

Metadata is served by a real HTTP server on loopback, trusted so the fetch may reach it.
"""

import logging
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from authservice.models import Account
from sso.models import SsoProvider
from tests.conftest import ORIGIN
from tests.sso.conftest import _sso_defaults, configure_sso, sign_in  # noqa: F401 - fixtures
from tests.sso.saml.test_metadata_fetch import IDP_SSO, keys, metadata, server, trusted  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

ATTACKER_ENTITY = "https://idp.attacker.test/entity"


@pytest.fixture
def owner(sign_in):  # noqa: F811 - sign_in is the imported fixture
    return sign_in("owner@acme.com")


@pytest.fixture
def linked_provider(owner, trusted, keys):  # noqa: F811 - trusted and keys are the imported fixtures
    """A SAML provider registered by URL, with one account linked through it."""
    trusted.set("/md", metadata(keys, "old"))
    response = owner.api_post("/sso/register", {
        "providerId": "rot", "issuer": f"{ORIGIN}/sp/rot", "domain": "acme.com",
        "samlConfig": {"entryPoint": IDP_SSO, "idpMetadata": {"url": f"{trusted.url}/md"}}})
    assert response.status_code == 200, response.content
    Account.objects.create(provider_id="rot", account_id="alice@acme.com", user=owner.user)
    return SsoProvider.objects.get(provider_id="rot")


def stored(provider_id="rot"):
    return SsoProvider.objects.get(provider_id=provider_id).saml_config


def update_metadata_url(owner, url):
    return owner.api_post("/sso/update-provider",
                          {"providerId": "rot", "samlConfig": {"idpMetadata": {"url": url}}})


def run_refresh(*args):
    out, err = StringIO(), StringIO()
    call_command("sso_refresh_metadata", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


# --- update-provider -----------------------------------------------------------------------------
def test_pointing_the_metadata_url_at_another_idp_is_locked(owner, linked_provider, trusted, keys):  # noqa: F811
    before = stored()
    trusted.set("/evil", metadata(keys, "other", entity=ATTACKER_ENTITY))
    response = update_metadata_url(owner, f"{trusted.url}/evil")
    assert response.status_code == 409, response.content
    assert response.json()["code"] == "PROVIDER_IDENTITY_LOCKED"
    assert stored() == before


def test_pointing_the_metadata_url_at_the_same_entity_with_another_key_is_locked(
        owner, linked_provider, trusted, keys):  # noqa: F811
    before = stored()
    trusted.set("/same-entity", metadata(keys, "other"))
    response = update_metadata_url(owner, f"{trusted.url}/same-entity")
    assert response.status_code == 409, response.content
    assert response.json()["code"] == "PROVIDER_IDENTITY_LOCKED"
    assert stored() == before


def test_a_locked_metadata_url_is_not_even_fetched(owner, linked_provider, trusted, keys):  # noqa: F811
    trusted.set("/evil", metadata(keys, "other", entity=ATTACKER_ENTITY))
    update_metadata_url(owner, f"{trusted.url}/evil")
    assert "/evil" not in trusted.hits


# --- the refresh command -------------------------------------------------------------------------
def test_a_refresh_that_finds_new_keys_is_refused_while_accounts_are_linked(
        linked_provider, trusted, keys):  # noqa: F811
    before = stored()
    trusted.set("/md", metadata(keys, "other"))
    with pytest.raises(CommandError, match="rot"):
        run_refresh()
    assert stored() == before


def test_the_refused_refresh_names_the_lock(linked_provider, trusted, keys):  # noqa: F811
    trusted.set("/md", metadata(keys, "new"))
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("sso_refresh_metadata", "rot", stdout=StringIO(), stderr=err)
    assert "PROVIDER_IDENTITY_LOCKED" in err.getvalue()


def test_a_refresh_that_adds_a_second_key_is_refused_while_accounts_are_linked(
        linked_provider, trusted, keys):  # noqa: F811
    # An extra certificate next to the genuine one is enough to sign for every linked user.
    before = stored()
    trusted.set("/md", metadata(keys, "old", "other"))
    with pytest.raises(CommandError):
        run_refresh("rot")
    assert stored() == before


def test_an_administrator_rekeys_explicitly_and_the_rekey_is_logged(
        linked_provider, trusted, keys, caplog):  # noqa: F811
    trusted.set("/md", metadata(keys, "new"))
    with caplog.at_level(logging.WARNING, logger="sso"):
        out, _ = run_refresh("--allow-rekey", "rot")
    assert "rot: updated" in out
    assert stored()["idpMetadata"]["metadata"] == metadata(keys, "new")
    assert any("re-keyed" in record.getMessage() and "rot" in record.getMessage() for record in caplog.records)
