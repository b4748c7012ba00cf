"""Attack 14f, held: provider_id immutability and the conflict rule on paths the 14e tests do not name (I1)."""

import pytest

from authservice.models import Account
from sso.models import SsoProvider
from sso.scim import tokens
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

SOCIAL = {"type": "oidc", "issuer": "https://op.corp.example", "clientId": "c", "clientSecret": "s"}


def make_row(owner, provider_id="corp"):
    return SsoProvider.objects.create(provider_id=provider_id, issuer="https://idp.evil.com", domain="evil.com",
                                      oidc_config={"clientId": "evil", "clientSecret": "x"},
                                      domain_verified=True, user=owner)


def test_provider_id_cannot_change_through_related_manager_or_update_or_create(make_user):
    owner = make_user(email="mallory@evil.com")
    row = make_row(owner)
    with pytest.raises(ValueError):
        owner.sso_providers.update(provider_id="corp-old")
    with pytest.raises(ValueError):
        SsoProvider.objects.update_or_create(pk=row.pk, defaults={"provider_id": "corp-old"})
    with pytest.raises(ValueError):
        SsoProvider.objects.filter(pk=row.pk).values("id").update(provider_id="corp-old")
    assert SsoProvider.objects.get(pk=row.pk).provider_id == "corp"


def test_scim_delete_connection_and_listing_do_not_manage_a_conflicting_row(make_user, configure, configure_sso):
    owner = make_user(email="mallory@evil.com")
    configure_sso(scim={"enabled": True})
    row = make_row(owner)
    tokens.issue(row)
    victim = Account.objects.create(user=owner, provider_id="corp", account_id="someone-social")
    configure(social_providers={"corp": SOCIAL})
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": "mallory@evil.com", "password": PASSWORD}).status_code == 200
    response = client.api_post("/scim/delete-provider-connection", {"providerId": "corp"})
    assert response.status_code == 409 and error_of(response)["code"] == "PROVIDER_ID_CONFLICT"
    assert client.api_get("/sso/providers").status_code == 200  # listing only shows it (no secrets)
    assert Account.objects.filter(pk=victim.pk).exists()


@pytest.mark.parametrize("variant", ["Corp", "CORP", "corp-"])
def test_a_case_variant_row_shares_no_accounts_with_the_claimed_id(make_user, configure, variant):
    """Ids compare exactly on both sides: a variant row is a different provider with its own accounts."""
    owner = make_user(email="mallory@evil.com")
    make_row(owner, provider_id=variant)
    Account.objects.create(user=owner, provider_id="corp", account_id="victim-sub")
    configure(social_providers={"corp": SOCIAL})
    assert not Account.objects.filter(provider_id=variant).exists()
    SsoProvider.objects.get(provider_id=variant).delete()
    assert Account.objects.filter(provider_id="corp").exists()
