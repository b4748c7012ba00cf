"""Attack 14e, attacks that held: OAuth mix-up at the shared OIDC callback (I1; sso/issuers.py, RFC 9700 §4.4).

With ``redirect_uri`` set, an honest IdP's code arrives at ``/sso/callback`` with the state of whatever
sign-in the victim's browser started; only ``iss`` tells the IdPs apart. Each attack tries to get the
honest IdP's code posted to a token endpoint the attacker runs; each must end with no token request there.
"""

import pytest
from django.urls import reverse

from sso.models import SsoProvider
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.peers.social import _stub_server, stub  # noqa: F401 - fixtures
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import authorize_params
from tests.sso.test_oidc_callback import query_of

pytestmark = pytest.mark.django_db

HONEST_CODE = "code-issued-by-the-honest-idp"


@pytest.fixture
def setup(stub_idp, stub, configure, configure_sso, make_provider, make_user):  # noqa: F811
    """``honest`` (a row at stub_idp), the shared callback on, and ``stub`` as the attacker's server."""
    configure(trusted_origins=[stub_idp.url, stub.url])
    configure_sso(redirect_uri="/sso/callback")
    make_provider("honest", stub_idp.issuer, stub_idp.oidc_config(clientId="honest-client"))
    stub.seen_tokens = []
    stub.routes[("POST", "/token")] = lambda seen: (stub.seen_tokens.append(seen), (200, {"access_token": "x"}))[1]
    stub.routes[("GET", "/evil-discovery")] = (200, {
        "issuer": stub_idp.issuer, "authorization_endpoint": f"{stub_idp.url}/authorize",
        "token_endpoint": f"{stub.url}/token", "jwks_uri": f"{stub_idp.url}/jwks"})
    make_user(email="mallory@evil.test")
    attacker = ApiClient()
    assert attacker.api_post("/sign-in/email", {"email": "mallory@evil.test", "password": PASSWORD}).status_code == 200
    return stub_idp, stub, attacker


def evil_body(stub_idp, stub, issuer=None, **config):  # noqa: F811
    oidc = {"clientId": "honest-client", "clientSecret": "guess", "skipDiscovery": True,
            "authorizationEndpoint": f"{stub_idp.url}/authorize", "tokenEndpoint": f"{stub_idp.url}/token",
            "jwksEndpoint": f"{stub_idp.url}/jwks", "discoveryEndpoint": f"{stub.url}/evil-discovery", **config}
    return {"providerId": "evil", "issuer": issuer or stub_idp.issuer, "domain": "evil.test",
            "oidcConfig": {key: value for key, value in oidc.items() if value is not None}}


def register_evil(attacker, body):
    """Registered, and evil.test proved (the attacker's own DNS)."""
    response = attacker.api_post("/sso/register", body)
    if response.status_code == 200:
        row = SsoProvider.objects.get(provider_id="evil")
        row.domain_verified = True
        row.save()
    return response


def honest_code_at_shared_callback(victim, provider_id, iss):
    started = victim.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": "/d",
                                               "errorCallbackURL": "/oops"})
    assert started.status_code == 200, started.content
    state = authorize_params(started.json()["url"])["state"]
    return victim.get("/api/auth/sso/callback", {"code": HONEST_CODE, "state": state, "iss": iss})


def test_admin_rerun_discovery_moving_a_rows_token_endpoint_is_still_refused_at_the_shared_callback(
        setup, admin_client):
    stub_idp, stub, attacker = setup  # noqa: F811
    # Allowed: the honest issuer with the honest token endpoint, but a discoveryEndpoint of the attacker's.
    assert register_evil(attacker, evil_body(stub_idp, stub)).status_code == 200
    rows = list(SsoProvider.objects.values_list("pk", flat=True))
    admin_client.post(reverse("admin:sso_ssoprovider_changelist"),
                      {"action": "rerun_discovery", "_selected_action": rows})
    assert SsoProvider.objects.get(provider_id="evil").oidc_config["tokenEndpoint"] == f"{stub.url}/token"
    response = honest_code_at_shared_callback(ApiClient(), "evil", stub_idp.issuer)
    assert query_of(response)["error"] == "invalid_provider"
    assert stub.seen_tokens == []


@pytest.mark.parametrize("config", [{"tokenEndpoint": None, "skipDiscovery": False},
                                    {"tokenEndpoint": None}], ids=["discovered", "none-stored"])
def test_registering_the_honest_issuer_with_a_token_endpoint_found_later_is_refused(setup, config):
    stub_idp, stub, attacker = setup  # noqa: F811
    response = attacker.api_post("/sso/register", evil_body(stub_idp, stub, **config))
    assert response.status_code == 422 and error_of(response)["code"] == "ISSUER_IN_USE", response.content


@pytest.mark.parametrize("variant", ["{}/", "{}:443", "{}/.", "{}?", "{}#"])
def test_a_string_variant_of_the_honest_issuer_never_matches_its_iss(setup, variant):
    stub_idp, stub, attacker = setup  # noqa: F811
    issuer = variant.format(stub_idp.issuer)
    response = register_evil(attacker, evil_body(stub_idp, stub, issuer=issuer, tokenEndpoint=f"{stub.url}/token"))
    if response.status_code == 400:
        return  # not even a valid issuer
    assert response.status_code == 200, response.content  # a distinct issuer: registration allows it
    response = honest_code_at_shared_callback(ApiClient(), "evil", stub_idp.issuer)
    assert query_of(response)["error"] == "invalid_provider"
    assert stub.seen_tokens == []


def test_the_per_provider_callback_refuses_another_providers_state(setup, configure_sso):
    stub_idp, stub, attacker = setup  # noqa: F811
    configure_sso(redirect_uri=None)
    assert register_evil(attacker, evil_body(
        stub_idp, stub, issuer=stub_idp.issuer, tokenEndpoint=f"{stub.url}/token")).status_code == 200
    victim = ApiClient()
    started = victim.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/d", "errorCallbackURL": "/oops"})
    state = authorize_params(started.json()["url"])["state"]
    # The honest IdP returns only to honest's registered callback; the state is the attacker's sign-in.
    response = victim.get("/api/auth/sso/callback/honest", {"code": HONEST_CODE, "state": state,
                                                            "iss": stub_idp.issuer})
    assert "error=" in response["Location"]
    assert stub.seen_tokens == [] and stub_idp.token_requests == []
