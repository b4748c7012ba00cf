"""One OIDC issuer, one token endpoint (sso/issuers.py): the shared callback tells providers apart by
RFC 9207's ``iss`` alone, so a row may not claim an issuer that another provider redeems codes for
elsewhere, and the shared callback refuses a row whose issuer is claimed that way anyway (I1)."""

import pytest

from authservice.models import Account, Session
from sso.models import SsoProvider
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import SHARED_CALLBACK, StubIdP, authorize_params, callback_path, op_login
from tests.sso.test_default_sso import item
from tests.sso.test_oidc_callback import query_of

pytestmark = pytest.mark.django_db

HONEST_CODE = "code-issued-by-the-honest-idp"


@pytest.fixture
def evil_idp():
    evil = StubIdP()
    yield evil
    evil.close()


@pytest.fixture
def registrant(make_user):
    """A signed-in ordinary user who registers providers."""
    client = ApiClient()
    make_user(email="mallory@evil.test")
    assert client.api_post("/sign-in/email", {"email": "mallory@evil.test", "password": PASSWORD}).status_code == 200
    return client


def register(client, provider_id, issuer, token_endpoint, authorization_host):
    return client.api_post("/sso/register", {
        "providerId": provider_id, "issuer": issuer, "domain": f"{provider_id}.test",
        "oidcConfig": {"clientId": f"{provider_id}-client", "clientSecret": "secret", "skipDiscovery": True,
                       "authorizationEndpoint": f"{authorization_host}/authorize", "tokenEndpoint": token_endpoint,
                       "jwksEndpoint": f"{authorization_host}/jwks"}})


@pytest.fixture
def settings_provider(stub_idp, evil_idp, configure, configure_sso):
    configure(trusted_origins=[stub_idp.url, evil_idp.url])
    configure_sso(default_sso=[{"providerId": "corp", "domain": "corp.test", "issuer": stub_idp.issuer,
                                "oidcConfig": stub_idp.oidc_config(clientId="corp-client")}])
    return stub_idp


# --- registration ---------------------------------------------------------------------------------
def test_a_row_may_not_take_the_issuer_of_a_settings_provider_with_another_token_endpoint(
        registrant, settings_provider, evil_idp):
    response = register(registrant, "evil", settings_provider.issuer, f"{evil_idp.url}/token", evil_idp.url)
    assert response.status_code == 422 and error_of(response)["code"] == "ISSUER_IN_USE"
    assert not SsoProvider.objects.exists()


def test_a_row_may_share_the_issuer_of_a_settings_provider_and_its_token_endpoint(
        registrant, settings_provider, evil_idp):
    # A client of its own at the operator's OP: a code confused between the two reaches the OP that
    # issued it, which refuses it for the other client.
    response = register(registrant, "tenant", settings_provider.issuer, f"{settings_provider.url}/token", evil_idp.url)
    assert response.status_code == 200, response.content


def test_with_the_shared_callback_a_row_may_not_take_another_rows_issuer_with_another_token_endpoint(
        registrant, stub_idp, evil_idp, configure, configure_sso, make_provider):
    configure(trusted_origins=[stub_idp.url, evil_idp.url])
    configure_sso(redirect_uri="/sso/callback")
    make_provider("honest", stub_idp.issuer, stub_idp.oidc_config())
    response = register(registrant, "evil", stub_idp.issuer, f"{evil_idp.url}/token", evil_idp.url)
    assert response.status_code == 422 and error_of(response)["code"] == "ISSUER_IN_USE"


def test_with_per_provider_callbacks_rows_may_share_an_issuer(
        registrant, stub_idp, evil_idp, configure, make_provider):
    # The IdP returns only to the callback registered for its client, whose path names the provider.
    configure(trusted_origins=[stub_idp.url, evil_idp.url])
    make_provider("honest", stub_idp.issuer, stub_idp.oidc_config())
    response = register(registrant, "other", stub_idp.issuer, f"{evil_idp.url}/token", evil_idp.url)
    assert response.status_code == 200, response.content


def test_an_update_may_not_move_a_shared_issuers_token_endpoint_elsewhere(
        registrant, stub_idp, evil_idp, configure, configure_sso, make_provider):
    configure(trusted_origins=[stub_idp.url, evil_idp.url])
    configure_sso(redirect_uri="/sso/callback")
    make_provider("honest", stub_idp.issuer, stub_idp.oidc_config())
    registered = register(registrant, "mine", stub_idp.issuer, f"{stub_idp.url}/token", evil_idp.url)
    assert registered.status_code == 200, registered.content
    response = registrant.api_post("/sso/update-provider", {
        "providerId": "mine", "oidcConfig": {"tokenEndpoint": f"{evil_idp.url}/token"}})
    assert response.status_code == 422 and error_of(response)["code"] == "ISSUER_IN_USE"
    assert SsoProvider.objects.get(provider_id="mine").oidc_config["tokenEndpoint"] == f"{stub_idp.url}/token"


# --- the shared callback ----------------------------------------------------------------------------
def test_the_shared_callback_refuses_a_row_whose_issuer_a_settings_provider_redeems_elsewhere(
        api, settings_provider, evil_idp, configure_sso, make_provider):
    # A row that took the issuer before the operator named it in settings (registration refuses it now).
    configure_sso(redirect_uri="/sso/callback")
    make_provider("evil", settings_provider.issuer, evil_idp.oidc_config(issuer=settings_provider.issuer),
                  domain="evil.test")
    started = api.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/d", "errorCallbackURL": "/oops"})
    assert started.status_code == 200, started.content
    state = authorize_params(started.json()["url"])["state"]
    response = api.get("/api/auth/sso/callback", {"code": HONEST_CODE, "state": state, "iss": settings_provider.issuer})
    assert response.status_code == 302 and query_of(response)["error"] == "invalid_provider"
    assert evil_idp.token_requests == []
    assert not Session.objects.exists()


def test_the_shared_callback_refuses_both_rows_that_claim_one_issuer_with_two_token_endpoints(
        api, stub_idp, evil_idp, configure, configure_sso, make_provider):
    configure(trusted_origins=[stub_idp.url, evil_idp.url])
    configure_sso(redirect_uri="/sso/callback")
    make_provider("honest", stub_idp.issuer, stub_idp.oidc_config())
    make_provider("evil", stub_idp.issuer, evil_idp.oidc_config(issuer=stub_idp.issuer), domain="evil.test")
    for provider_id in ("honest", "evil"):
        started = api.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": "/d",
                                                "errorCallbackURL": "/oops"})
        state = authorize_params(started.json()["url"])["state"]
        response = api.get("/api/auth/sso/callback", {"code": HONEST_CODE, "state": state, "iss": stub_idp.issuer})
        assert query_of(response)["error"] == "invalid_provider", provider_id
    assert stub_idp.token_requests == [] and evil_idp.token_requests == []


@pytest.mark.e2e
def test_a_settings_provider_still_signs_in_at_the_shared_callback_beside_a_row_copying_its_issuer(
        api, trusted_op, configure_sso, make_provider, evil_idp):
    configure_sso(redirect_uri="/sso/callback", default_sso=[item(trusted_op)])
    make_provider("evil", trusted_op.issuer, evil_idp.oidc_config(issuer=trusted_op.issuer), domain="evil.test")
    started = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard"})
    location = op_login(started.json()["url"], "ada@acme.com", callback_prefix=SHARED_CALLBACK)
    path, query = callback_path(location)
    response = api.get(path, query)
    assert response["Location"] == "/dashboard", response.get("Location")
    assert Account.objects.get(user__email="ada@acme.com").provider_id == "acme"
