"""I1 with several domains per provider: only a domain verified on its own vouches (issue 14 §3).

A provider verified for ``corp.com`` lists ``corp.de`` too, still pending. Whoever runs that IdP
(an attacker who registered it, or a company claiming more than it proved) must not sign in, create
or link users of ``corp.de``, nor capture its sign-ins by routing.
"""

from urllib.parse import parse_qs, urlsplit

import pytest

from authservice.models import Account, Session
from sso import routing
from sso.models import SsoProviderDomain
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import authorize_params

pytestmark = pytest.mark.django_db


@pytest.fixture
def half_verified(stub_idp, make_provider):
    """``stub``: corp.com verified, corp.de pending."""
    make_provider("stub", stub_idp.issuer, stub_idp.oidc_config(), domain="corp.com,corp.de",
                  domain_verified=False)
    SsoProviderDomain.objects.filter(domain="corp.com").update(status="verified")
    return stub_idp


def sign_in_as(api, stub, email, sub="stub-user-1"):
    response = api.api_post("/sign-in/sso", {"providerId": "stub", "callbackURL": "/d", "errorCallbackURL": "/oops"})
    assert response.status_code == 200, response.content
    params = authorize_params(response.json()["url"])
    stub.id_token = stub.sign(stub.claims(params["nonce"], email=email, sub=sub))
    return api.get("/api/auth/sso/callback/stub", {"code": "c", "state": params["state"]})


def error_param(response):
    return parse_qs(urlsplit(response["Location"]).query).get("error", [None])[0]


def test_the_verified_domain_signs_in(api, half_verified):
    response = sign_in_as(api, half_verified, "ada@corp.com")
    assert error_param(response) is None
    assert Session.objects.filter(user__email="ada@corp.com").exists()


def test_the_unverified_second_domain_creates_no_user(api, half_verified, django_user_model):
    response = sign_in_as(api, half_verified, "ceo@corp.de")
    assert error_param(response) == "email_domain_not_trusted"
    assert not django_user_model.objects.filter(email="ceo@corp.de").exists()
    assert not Session.objects.exists()


def test_the_unverified_second_domain_does_not_link_an_existing_user(api, half_verified, make_user):
    victim = make_user(email="ceo@corp.de", email_verified=True)
    response = sign_in_as(api, half_verified, "ceo@corp.de")
    assert error_param(response) == "email_domain_not_trusted"
    assert not Account.objects.filter(user=victim, provider_id="stub").exists()
    assert not Session.objects.filter(user=victim).exists()


def test_a_subdomain_of_the_unverified_domain_is_not_trusted_either(api, half_verified):
    assert error_param(sign_in_as(api, half_verified, "ada@eu.corp.de")) == "email_domain_not_trusted"


def test_routing_does_not_send_the_unverified_domains_users_to_the_provider(half_verified):
    assert routing.provider_for_hostname("corp.com").provider_id == "stub"
    assert routing.provider_for_hostname("corp.de") is None
    assert routing.provider_for_hostname("eu.corp.de") is None


def test_a_failed_domain_is_not_trusted(api, half_verified):
    SsoProviderDomain.objects.filter(domain="corp.de").update(status="failed")
    assert error_param(sign_in_as(api, half_verified, "ceo@corp.de")) == "email_domain_not_trusted"
    assert routing.provider_for_hostname("corp.de") is None
