"""Attack 14d: sign-in by ``organizationSlug`` reaches a row that a settings provider shadows (I1).

docs/sso-options.md: a settings provider "wins over a database row with the same provider_id (the row
is ignored by sign-in and routing)". ``sso.signin.find_provider`` honours that for ``providerId`` and
routing by domain/e-mail, but the ``organizationSlug`` branch reads
``SsoProvider.objects.filter(organization_id=...)`` without excluding shadowed rows: the attacker's row
``corp`` (registered before the operator named the id) still starts sign-ins, its authorization URL and
state carrying the settings provider's id (``redirect_uri`` ``/sso/callback/corp``). The callback then
refuses the state (its rowId is not the settings provider's), which the second test keeps.
"""

import pytest

from sso.models import Member, Organization, SsoProvider
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import StubIdP, authorize_params

pytestmark = pytest.mark.django_db


@pytest.fixture
def shadowed(stub_idp, configure, configure_sso, make_user):
    evil = StubIdP()
    configure(trusted_origins=[stub_idp.url, evil.url])
    mallory = make_user(email="mallory@evil.com")
    org = Organization.objects.create(name="Evil", slug="evilorg")
    Member.objects.create(organization=org, user=mallory, role=Member.OWNER)
    SsoProvider.objects.create(provider_id="corp", issuer=evil.issuer, domain="evil.com", domain_verified=True,
                               oidc_config=evil.oidc_config(), user=mallory, organization_id=org.pk)
    configure_sso(default_sso=[{"providerId": "corp", "domain": "corp.com", "issuer": stub_idp.issuer,
                                "oidcConfig": stub_idp.oidc_config()}])
    yield stub_idp, evil
    evil.close()


def test_sign_in_by_organization_slug_ignores_a_shadowed_row(api, shadowed):
    honest, evil = shadowed
    response = api.api_post("/sign-in/sso", {"organizationSlug": "evilorg", "callbackURL": "/dashboard"})
    assert response.status_code != 200 or not response.json()["url"].startswith(evil.url), response.content


def test_a_sign_in_started_at_a_shadowed_row_cannot_complete(api, shadowed):
    honest, evil = shadowed
    response = api.api_post("/sign-in/sso", {"organizationSlug": "evilorg", "callbackURL": "/dashboard",
                                             "errorCallbackURL": "/oops"})
    if response.status_code != 200:
        return
    params = authorize_params(response.json()["url"])
    evil.id_token = evil.sign(evil.claims(params["nonce"], email="ada@corp.com"))
    honest.id_token = honest.sign(honest.claims(params["nonce"], email="ada@corp.com"))
    done = api.get("/api/auth/sso/callback/corp", {"code": "c", "state": params["state"]})
    assert done.status_code == 302 and "error=" in done["Location"], done["Location"]
    assert not evil.token_requests and not honest.token_requests
    assert not api.api_get("/get-session").json()
