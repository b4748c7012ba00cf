"""Attack 14d: the operator's commands and a shadowed row (I1; docs/sso-options.md "Read-only").

A settings provider has no row; its id names, in the database, only the row the attacker registered
before the deployment named the id. ``POST /scim/generate-token`` and ``/sso/verify-domain`` refuse the id
(403 PROVIDER_FROM_SETTINGS), but ``manage.py scim_token <id>`` and ``manage.py sso_verify_domain <id>``
look the id up in the table only (sso/management/commands/*.py) and act on the attacker's row: an
operator who runs ``scim_token corp`` for the company's settings provider hands the company's directory a
token of the attacker's connection (whose users join the attacker's organization, and which adopts
the settings provider's users, see test_attack14d_default_sso_shadowed_accounts.py); ``sso_verify_domain
corp --request-token`` prints TXT records whose publication verifies the company's domain *for the
attacker's row*.
"""

import pytest
from django.core.management import CommandError, call_command

from sso.models import SsoProvider
from sso.scim.models import ScimConnection
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

ITEM = {"providerId": "corp", "domain": "corp.com", "issuer": "https://idp.corp.com",
        "oidcConfig": {"clientId": "corp-client", "clientSecret": "corp-secret",
                       "authorizationEndpoint": "https://idp.corp.com/authorize",
                       "tokenEndpoint": "https://idp.corp.com/token", "jwksEndpoint": "https://idp.corp.com/jwks"}}


@pytest.fixture
def shadowed_row(make_user, configure_sso):
    """The attacker's row ``corp`` (registered before the operator named the id; it lists corp.com too),
    then the operator's settings provider ``corp``."""
    row = SsoProvider.objects.create(provider_id="corp", issuer="https://idp.evil.com", domain="evil.com,corp.com",
                                     oidc_config={"clientId": "evil", "clientSecret": "evil"},
                                     user=make_user(email="mallory@evil.com"))
    configure_sso(default_sso=[ITEM], scim={"enabled": True})
    return row


def test_scim_token_command_refuses_a_settings_providers_id(shadowed_row):
    with pytest.raises(CommandError):
        call_command("scim_token", "corp")
    assert not ScimConnection.objects.filter(provider=shadowed_row, token_hash__isnull=False).exists()


def test_verify_domain_command_refuses_a_settings_providers_id(shadowed_row):
    with pytest.raises(CommandError):
        call_command("sso_verify_domain", "corp", "--request-token", "--domain", "corp.com")
    assert not shadowed_row.domain_entries.filter(domain="corp.com", token__isnull=False).exclude(token="").exists()
