"""Attack 14f: the registrant of a row in conflict deletes it anyway, by deleting their own user (I1).

The promise (docs/sso-options.md, sso/provider_claims.py): a row whose id the deployment claims answers
409 PROVIDER_ID_CONFLICT to its owner's delete-provider, because deleting it deletes every account of
that id (sso/row_deletion.py), the claiming social provider's users' included. But ``SsoProvider.user``
is ``on_delete=CASCADE`` and row_deletion's ``post_delete`` receiver runs for the cascade too: Mallory's
``POST /delete-user`` deletes her row, and with it the victims' accounts of that id (a social provider's, or a
whole default_sso item's users: links and tokens). Fixed: the cascade is refused (409) while the row is
in conflict; only the operator's deletion of the row itself removes it (sso/row_deletion.py).
"""

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account
from sso.models import SsoProvider
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

SOCIAL = {"type": "oidc", "issuer": "https://op.corp.example", "clientId": "c", "clientSecret": "s"}


@pytest.mark.parametrize("claim", ["social", "default_sso"])
def test_deleting_your_user_deletes_the_accounts_your_row_shares(make_user, configure, configure_sso, claim):
    mallory = make_user(email="mallory@evil.com")
    victim = make_user(email="ada@example.com", email_verified=True)
    # Registered before the id was claimed (as tests/sso/test_provider_id_claims.py's make_row).
    SsoProvider.objects.create(provider_id="corp", issuer="https://idp.evil.com", domain="evil.com",
                               oidc_config={"clientId": "evil", "clientSecret": "evil-secret"},
                               domain_verified=True, user=mallory)
    configure(delete_user={"enabled": True})
    if claim == "social":
        configure(social_providers={"corp": SOCIAL})
    else:  # a whole default_sso item named after the row was registered (attack 14d's ordering)
        configure_sso(default_sso=[{"providerId": "corp", "domain": "corp.com", "issuer": "https://op.corp.com",
                                    "oidcConfig": {"clientId": "c", "clientSecret": "s"}}])
    social = Account.objects.create(user=victim, provider_id="corp", account_id="victim-social-sub",
                                    refresh_token="victims-refresh-token")
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": "mallory@evil.com", "password": PASSWORD}).status_code == 200
    refused = client.api_post("/sso/delete-provider", {"providerId": "corp"})
    assert refused.status_code in (403, 409), refused.content  # 409 conflict, or 403 PROVIDER_FROM_SETTINGS
    deleted = client.api_post("/delete-user", {"password": PASSWORD})
    # Fixed: the cascade to a row in conflict is refused until the operator deletes the row itself.
    assert deleted.status_code == 409 and error_of(deleted)["code"] == "PROVIDER_ID_CONFLICT", deleted.content
    assert get_user_model().objects.filter(pk=mallory.pk).exists()
    assert Account.objects.filter(pk=social.pk).exists(), "the victim's social account went with Mallory's row"


def test_the_operator_may_still_delete_the_row_itself_and_then_the_user(make_user, configure):
    mallory = make_user(email="mallory@evil.com")
    row = SsoProvider.objects.create(provider_id="corp", issuer="https://idp.evil.com", domain="evil.com",
                                     oidc_config={"clientId": "evil", "clientSecret": "evil-secret"},
                                     domain_verified=True, user=mallory)
    configure(social_providers={"corp": SOCIAL})
    from django.db import transaction

    from authservice.errors import APIError

    with pytest.raises(APIError), transaction.atomic():
        mallory.delete()  # the cascade is refused
    row.delete()
    mallory.delete()
    assert not SsoProvider.objects.exists() and not get_user_model().objects.filter(pk=mallory.pk).exists()
