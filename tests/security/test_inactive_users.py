"""I1: a deactivated user (``is_active`` false) gets no session from any external provider.

Before issue 12 only social sign-in checked ``is_active`` (with a generic error); SSO OIDC and the SAML
ACS handed a deactivated user a session. The one external-identity flow now checks it once, for every
protocol, and refuses with the catalogued ``user_inactive``. Real peers: a stub OpenID provider for
social sign-in, the npm oidc-provider OP for SSO OIDC, the samlify IdP for SAML.
"""

from urllib.parse import parse_qs, urlsplit

import pytest

from authservice.models import Account, Session
from tests.peers.social import (  # noqa: F401 - fixtures
    _stub_server, corp, sign_in_with_corp, stub,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import callback_path, make_provider, oidc_op, op_login, trusted_op  # noqa: F401
from tests.sso.saml.conftest import (  # noqa: F401 - fixtures
    browser, post_acs, saml_idp, saml_keys, saml_owner, saml_provider, session_user, user_for,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

REFUSED = "user_inactive"


def error_of(response):
    assert response.status_code == 302, response.content
    return parse_qs(urlsplit(response["Location"]).query).get("error", [None])[-1]


def deactivate(user):
    user.is_active = False
    user.save(update_fields=["is_active"])


# --- social ---------------------------------------------------------------------------------------------
def test_social_sign_in_refuses_an_inactive_user(api, corp, make_user):
    ada = make_user(email="ada@example.com", email_verified=True)
    assert "error" not in sign_in_with_corp(api, corp, sub="sub-ada")["Location"]  # linked, signed in
    deactivate(ada)
    api.cookies.clear()
    response = sign_in_with_corp(api, corp, sub="sub-ada")
    assert error_of(response) == REFUSED
    assert Session.objects.filter(user=ada).count() == 1  # only the one from before
    assert "auth.session_token" not in api.cookies


# --- SSO OIDC ---------------------------------------------------------------------------------------------
def sso_sign_in(api):
    response = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard"})
    assert response.status_code == 200, response.content
    return api.get(*callback_path(op_login(response.json()["url"], "ada@acme.com")))


def test_sso_oidc_refuses_an_inactive_linked_user(api, trusted_op, make_provider, make_user):
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"))
    ada = make_user(email="ada@acme.com", email_verified=True)
    Account.objects.create(user=ada, provider_id="acme", account_id="ada@acme.com")
    deactivate(ada)
    response = sso_sign_in(api)
    assert error_of(response) == REFUSED
    assert not Session.objects.filter(user=ada).exists()
    assert "auth.session_token" not in api.cookies


def test_sso_oidc_refuses_to_link_an_inactive_user(api, trusted_op, make_provider, make_user):
    make_provider("acme", trusted_op.issuer, trusted_op.oidc_config("acme"))
    ada = make_user(email="ada@acme.com", email_verified=True, is_active=False)
    assert error_of(sso_sign_in(api)) == REFUSED
    assert not Session.objects.filter(user=ada).exists()
    assert not Account.objects.filter(provider_id="acme").exists()  # the link was rolled back too


# --- SAML -------------------------------------------------------------------------------------------------
def test_saml_refuses_an_inactive_user(saml_provider, browser, make_user):
    ada = make_user(email="ada@acme.com", email_verified=True, is_active=False)
    provider = saml_provider("acme-saml")
    form = provider.idp_response(browser, user_for("ada@acme.com"))
    response = post_acs(browser, provider.provider_id, form.saml_response, form.relay_state)
    assert error_of(response) == REFUSED
    assert not Session.objects.filter(user=ada).exists()
    assert session_user(browser) is None


# --- e-mail verification links -----------------------------------------------------------------------
def test_a_verification_link_signs_no_inactive_user_in(api, make_user, configure):
    """An inactive account is treated as gone: the link changes nothing and starts no session."""
    from authservice.flows.verification import make_token

    configure(email_verification={"auto_sign_in_after_verification": True})
    ada = make_user(email="ada@example.com")
    deactivate(ada)
    response = api.api_get("/verify-email", {"token": make_token(ada.email, user=ada)})
    assert response.status_code == 401
    assert not Session.objects.filter(user=ada).exists()


def test_no_flow_can_open_a_session_for_an_inactive_user(make_user):
    """The backstop in the one function that makes sessions, for a flow that forgot to check."""
    from authservice.api.context import Context
    from authservice.errors import APIError
    from authservice.flows import sessions

    ada = make_user(email="ada@example.com")
    deactivate(ada)
    with pytest.raises(APIError):
        sessions.create_session(Context(None, headers={}), ada, method="password")
    assert not Session.objects.filter(user=ada).exists()
