"""Attack 14, the shared OIDC callback (``AUTHSERVICE_SSO["redirect_uri"]``): a code issued by provider A
is redeemed at provider B's token endpoint (OAuth mix-up, RFC 9700 §4.4; I1).

With the shared callback every provider sends the browser back to the same URL, and ``finish`` takes
the provider from the server-side state. That binds the *state* to a provider, not the *code*: the
callback cannot tell which authorization server issued the code, unless the response carries RFC 9207
``iss``, and ``_finish`` only compares ``iss`` when it is present. Many IdPs (Entra ID among them) send
no ``iss``.

The attack (the attacker runs provider B, e.g. the IdP of another organization the victim also signs in
through, or one the victim is lured to): the victim starts a sign-in at B (state sB, bound to their
browser). B's authorization endpoint redirects the browser to the honest IdP A's authorization endpoint
with A's client_id, the shared redirect_uri and state sB (plus a PKCE challenge and nonce the attacker
took from a sign-in at A they started in their own browser). A has a session for the victim and
answers ``/sso/callback?code=<A's code>&state=sB``. The state is valid for this browser, so the service
POSTs A's code to **B's** token endpoint: the attacker now holds a code for the victim at A, bound to
their own PKCE challenge and nonce, and finishes their own pending sign-in at A with it: signed in as
the victim. RFC 9700 §4.4.2: a client that talks to several authorization servers MUST use ``iss`` or
distinct redirect URIs.

Fix at the mechanism: when the shared callback is used (several issuers behind one redirect URI),
require ``iss`` and compare it with the state's provider (refuse a response without it), or give up the
shared URI and use the per-provider ``/sso/callback/{providerId}`` (distinct redirect URIs).
"""

import pytest

from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import StubIdP, authorize_params

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_idps(stub_idp, make_provider, configure, configure_sso):
    """``honest`` (A, the victim company's IdP) and ``evil`` (B, the attacker's), one shared callback."""
    evil = StubIdP()
    configure(trusted_origins=[stub_idp.url, evil.url])
    configure_sso(redirect_uri="/sso/callback")
    make_provider("honest", stub_idp.issuer, stub_idp.oidc_config(), domain="corp.test")
    make_provider("evil", evil.issuer, evil.oidc_config(clientId="evil-client"), domain="evil.test")
    yield stub_idp, evil
    evil.close()


def test_a_code_without_iss_on_the_shared_callback_is_not_sent_to_the_states_provider(api, two_idps):
    honest, evil = two_idps
    # The victim's browser starts a sign-in at the attacker's provider B.
    response = api.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/d", "errorCallbackURL": "/oops"})
    assert response.status_code == 200, response.content
    state_b = authorize_params(response.json()["url"])["state"]
    # B bounced the browser to A; A answers with its code and B's state, and (like many IdPs) no iss.
    api.get("/api/auth/sso/callback", {"code": "code-issued-by-honest-A", "state": state_b})
    leaked = [body for _, body in evil.token_requests if "code-issued-by-honest-A" in body]
    assert leaked == [], "A's authorization code was POSTed to the attacker's token endpoint"
