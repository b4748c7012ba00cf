"""GET /sso/callback, the shared OIDC callback of the ``redirect_uri`` setting (better-auth's
redirectURI): every provider sends the browser to one URL, and the provider is the one the sign-in's
state was stored for. Against the real OpenID provider (npm oidc-provider)."""

from urllib.parse import parse_qs, urlsplit

import pytest

from authservice.models import Account, Session
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import SHARED_CALLBACK, authorize_params, callback_path, op_login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]


@pytest.fixture
def shared(trusted_op, make_provider, configure_sso):
    configure_sso(redirect_uri="/sso/callback")
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"))
    make_provider("acme-two", trusted_op.issuer, trusted_op.oidc_config("acme-two"))
    return trusted_op


def start(api, provider_id):
    response = api.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": "/dashboard",
                                             "errorCallbackURL": "/oops"})
    assert response.status_code == 200, response.content
    return response.json()["url"]


def error_of_location(response):
    return parse_qs(urlsplit(response["Location"]).query).get("error", [None])[0]


def test_the_authorize_url_carries_the_shared_redirect_uri(api, shared):
    assert authorize_params(start(api, "acme"))["redirect_uri"] == SHARED_CALLBACK


def test_the_shared_callback_signs_in_through_the_provider_of_the_state(api, shared):
    location = op_login(start(api, "acme-two"), "ada@acme.com", callback_prefix=SHARED_CALLBACK)
    path, query = callback_path(location)
    assert path.endswith("/sso/callback")
    response = api.get(path, query)
    assert response.status_code == 302 and response["Location"] == "/dashboard", response.get("Location")
    session = Session.objects.get(token=api.cookies["auth.session_token"].value.split(".")[0])
    assert Account.objects.get(user=session.user).provider_id == "acme-two"


def test_the_shared_callback_without_a_state_is_an_error_redirect(api, shared):
    response = api.get("/api/auth/sso/callback", {"code": "c"})
    assert response.status_code == 302
    assert error_of_location(response) == "state_not_found"


def test_the_shared_callback_refuses_a_state_whose_cookie_is_missing(api, shared, client):
    location = op_login(start(api, "acme"), "ada@acme.com", callback_prefix=SHARED_CALLBACK)
    path, query = callback_path(location)
    response = client.get(path, query)  # another browser: no state cookie
    assert response.status_code == 302
    assert error_of_location(response) == "state_mismatch"
    assert not Session.objects.exists()


def test_the_per_provider_callback_still_refuses_another_providers_state(api, shared):
    location = op_login(start(api, "acme"), "ada@acme.com", callback_prefix=SHARED_CALLBACK)
    _, query = callback_path(location)
    response = api.get("/api/auth/sso/callback/acme-two", query)
    assert response.status_code == 302
    assert error_of_location(response) == "invalid_state"
    assert not Session.objects.exists()


def test_the_shared_callback_refuses_an_answer_without_iss(api, shared):
    # Several issuers behind one redirect URI: only RFC 9207's iss says which one issued the code.
    location = op_login(start(api, "acme"), "ada@acme.com", callback_prefix=SHARED_CALLBACK)
    path, query = callback_path(location)
    assert query.pop("iss") == shared.issuer  # oidc-provider sends it; an IdP that does not is refused
    response = api.get(path, query)
    assert response.status_code == 302
    assert error_of_location(response) == "invalid_provider"
    assert "issuer_missing" in response["Location"]
    assert not Session.objects.exists()
