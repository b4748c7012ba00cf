"""Attack 14d, providers from settings at the shared OIDC callback: a row that copies the settings
provider's issuer defeats the RFC 9207 ``iss`` check (OAuth mix-up, RFC 9700 §4.4; I1).

The shared callback (``AUTHSERVICE_SSO["redirect_uri"]``) serves every provider, the settings ones
included ("a provider from settings completes at the shared callback"). Attack 14 made ``iss``
mandatory there and compares it with the state's provider's ``issuer``. But the ``issuer`` of a row is
whatever its registrant wrote: with ``skipDiscovery`` nothing ties it to the endpoints, and nothing
refuses an issuer that another provider (here the operator's settings provider) already uses. RFC 9207
§4 / RFC 9700 §4.4.2 rely on issuer identifiers being unique among the client's authorization servers.

The attack: the attacker registers provider ``evil`` for their own verified domain with the *issuer of
the settings provider* and their own token endpoint. A victim starts a sign-in at ``evil`` (state sB,
bound to their browser). ``evil``'s authorization endpoint bounces the browser to the honest IdP with
the settings provider's client_id, the shared redirect URI, state sB, and the PKCE challenge and nonce
of a sign-in the attacker started at the honest provider in their own browser. The honest IdP answers
``/sso/callback?code=<honest code>&state=sB&iss=<honest issuer>``. ``iss`` equals ``evil``'s configured
issuer, so the service POSTs the honest code to the attacker's token endpoint; the attacker then
finishes their own pending sign-in at the honest provider with it, as the victim.
"""

import pytest

from sso.models import SsoProvider
from tests.conftest import PASSWORD, ApiClient
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import StubIdP, authorize_params

pytestmark = pytest.mark.django_db

HONEST_CODE = "code-issued-by-the-honest-settings-idp"


@pytest.fixture
def settings_and_evil(stub_idp, configure, configure_sso, make_user):
    """The operator's settings provider ``corp`` (the honest IdP) and the attacker's registered ``evil``
    whose issuer is the honest one's; one shared callback."""
    evil = StubIdP()
    configure(trusted_origins=[stub_idp.url, evil.url])
    configure_sso(redirect_uri="/sso/callback", default_sso=[{
        "providerId": "corp", "domain": "corp.test", "issuer": stub_idp.issuer,
        "oidcConfig": stub_idp.oidc_config(clientId="corp-client", clientSecret="corp-secret")}])
    attacker = ApiClient()
    make_user(email="mallory@evil.test")
    assert attacker.api_post("/sign-in/email", {"email": "mallory@evil.test", "password": PASSWORD}).status_code == 200
    registered = attacker.api_post("/sso/register", {
        "providerId": "evil", "issuer": stub_idp.issuer, "domain": "evil.test",
        "oidcConfig": {"clientId": "evil-client", "clientSecret": "evil-secret", "skipDiscovery": True,
                       "authorizationEndpoint": f"{evil.url}/authorize", "tokenEndpoint": f"{evil.url}/token",
                       "jwksEndpoint": f"{evil.url}/jwks"}})
    row = SsoProvider.objects.filter(provider_id="evil").first()
    if row is not None:
        # The attacker publishes the TXT record of evil.test, their own domain.
        row.domain_verified = True
        row.save()
    yield stub_idp, evil, registered
    evil.close()


def test_the_honest_code_is_not_sent_to_a_row_that_copied_the_settings_issuer(api, settings_and_evil):
    honest, evil, registered = settings_and_evil
    # Either registration refuses an issuer another provider uses, or the callback does not leak the code.
    if registered.status_code == 200:
        started = api.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/d", "errorCallbackURL": "/oops"})
        assert started.status_code == 200, started.content
        state_b = authorize_params(started.json()["url"])["state"]
        api.get("/api/auth/sso/callback", {"code": HONEST_CODE, "state": state_b, "iss": honest.issuer})
    leaked = [body for _, body in evil.token_requests if HONEST_CODE in body]
    assert leaked == [], "the settings IdP's authorization code was POSTed to the attacker's token endpoint"
