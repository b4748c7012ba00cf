"""I9: a sign-in state key addresses only sign-in states, never another kind of Verification row.

OIDC ``state`` and SAML ``RelayState`` keys were stored and looked up as bare identifiers in the
shared Verification table, and consumed (deleted) before being read. An anonymous ACS post with
``RelayState=_auth-token-<20-character providerId>`` (or an OIDC callback with that ``state``)
deleted the provider's pending domain-verification token, repeatably. Sign-in states now live under
their own prefix (``sso-state:<key>``) and are only ever looked up there.

Domain tokens have since moved to their own rows (``SsoProviderDomain``, issue 14 §3), but the table
still holds other single-use rows (reset links, verification links...): the fixture writes one with a
32-character identifier, a state key's length, and each attack must leave it in place.
"""

import pytest

from datetime import timedelta

from django.utils import timezone

from authservice.models import Verification
from sso import state
from sso.models import SsoProvider
from tests.conftest import ApiClient
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, sign_in  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

PROVIDER_ID = "acme-corporation-sso"  # 20 characters: "_auth-token-" + it is 32, a state key's length
TOKEN_ROW = f"_auth-token-{PROVIDER_ID}"


@pytest.fixture
def pending_domain_token(sign_in):
    owner = sign_in("owner@acme.com")
    assert owner.api_post("/sso/register", skip_discovery_body(provider_id=PROVIDER_ID)).status_code == 200
    assert len(TOKEN_ROW) == state.STATE_LENGTH
    Verification.objects.create(identifier=TOKEN_ROW, value="another kind of single-use row",
                                expires_at=timezone.now() + timedelta(hours=1))
    return owner


def test_a_saml_relay_state_cannot_consume_a_domain_verification_token(pending_domain_token):
    ApiClient(origin=None).post("/api/auth/sso/saml2/callback/anything",
                                f"SAMLResponse=x&RelayState={TOKEN_ROW}",
                                content_type="application/x-www-form-urlencoded")
    assert Verification.objects.filter(identifier=TOKEN_ROW).exists()


def test_an_oidc_state_cannot_consume_a_domain_verification_token(pending_domain_token):
    ApiClient(origin=None).get(f"/api/auth/sso/callback/{PROVIDER_ID}", {"state": TOKEN_ROW, "code": "x"})
    assert Verification.objects.filter(identifier=TOKEN_ROW).exists()


def test_consume_never_reads_a_row_outside_the_sign_in_namespace(pending_domain_token):
    with pytest.raises(state.StateError):
        state.consume(TOKEN_ROW)
    assert Verification.objects.filter(identifier=TOKEN_ROW).exists()


def test_sign_in_states_are_stored_under_their_own_prefix(pending_domain_token):
    pending = state.store(SsoProvider.objects.get(), callback_url="/dashboard")
    assert Verification.objects.filter(identifier=f"sso-state:{pending.key}").exists()
    assert not Verification.objects.filter(identifier=pending.key).exists()
    assert state.consume(pending.key).callback_url == "/dashboard"
