"""I1: a sign-in routed by domain or e-mail reaches only a provider trusted for that domain.

Anyone may register an SSO provider for any domain they name (security.md, the attacker). With domain
verification on, such a provider must not capture the sign-ins of the company that owns the domain:
routing by ``domain`` or ``email`` considers verified providers only (default providers from settings
count as verified), and the most specific of them wins. An unverified provider stays reachable by its
``providerId`` alone, where it answers ``401 DOMAIN_NOT_VERIFIED`` (issue 12, F6).
"""

from urllib.parse import parse_qsl, urlsplit

import pytest

from authservice.models import Verification
from tests.conftest import error_of
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import make_provider  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

IDP = "https://idp.example.net"


def config(client_id):
    return {"issuer": IDP, "clientId": client_id, "clientSecret": "s", "pkce": True,
            "authorizationEndpoint": f"{IDP}/authorize", "tokenEndpoint": f"{IDP}/token",
            "jwksEndpoint": f"{IDP}/jwks", "tokenEndpointAuthentication": "client_secret_basic"}


def provider(make_provider, provider_id, domain, verified):
    return make_provider(provider_id, IDP, config(f"{provider_id}-client"), domain=domain, domain_verified=verified)


def sign_in(api, **body):
    return api.api_post("/sign-in/sso", {"callbackURL": "/dashboard", **body})


def client_of(response):
    assert response.status_code == 200, response.content
    return dict(parse_qsl(urlsplit(response.json()["url"]).query))["client_id"]


def test_an_unverified_provider_registered_first_for_the_domain_does_not_capture_its_sign_ins(api, make_provider):
    provider(make_provider, "squatter", "corp.com", verified=False)
    provider(make_provider, "corp", "corp.com", verified=True)
    assert client_of(sign_in(api, email="ceo@corp.com")) == "corp-client"
    assert client_of(sign_in(api, domain="corp.com")) == "corp-client"


def test_an_unverified_provider_for_a_subdomain_does_not_capture_the_parent_companys_users(api, make_provider):
    provider(make_provider, "corp", "corp.com", verified=True)
    provider(make_provider, "squatter", "a.corp.com", verified=False)
    assert client_of(sign_in(api, email="ada@a.corp.com")) == "corp-client"


def test_an_exact_unverified_column_does_not_beat_a_verified_list_that_covers_the_domain(api, make_provider):
    provider(make_provider, "squatter", "corp.com", verified=False)
    provider(make_provider, "corp", "corp.org, Corp.com", verified=True)
    assert client_of(sign_in(api, email="ada@corp.com")) == "corp-client"


def test_the_most_specific_verified_provider_wins(api, make_provider):
    provider(make_provider, "corp", "corp.com", verified=True)
    provider(make_provider, "corp-eu", "eu.corp.com", verified=True)
    provider(make_provider, "squatter", "x.eu.corp.com", verified=False)
    assert client_of(sign_in(api, email="ada@x.eu.corp.com")) == "corp-eu-client"


def test_a_domain_only_an_unverified_provider_claims_finds_no_provider_and_stores_no_state(api, make_provider):
    provider(make_provider, "squatter", "corp.com", verified=False)
    response = sign_in(api, email="ceo@corp.com")
    assert response.status_code == 404
    assert error_of(response)["code"] == "PROVIDER_NOT_FOUND"
    assert not Verification.objects.exists()


def test_an_unverified_provider_is_reachable_by_its_provider_id_alone(api, make_provider):
    provider(make_provider, "squatter", "corp.com", verified=False)
    assert sign_in(api, domain="corp.com").status_code == 404
    response = sign_in(api, providerId="squatter")
    assert response.status_code == 401
    assert error_of(response)["code"] == "DOMAIN_NOT_VERIFIED"


def test_a_row_a_domainless_default_item_names_is_trusted_only_for_its_verified_domains(api, make_provider,
                                                                                        configure_sso):
    # Such a row may have been registered by anyone before the deployment named its id (attack pass 14,
    # test_attack14_social_membership.py): only whole providers from settings count as verified.
    configure_sso(default_sso=[{"providerId": "corp-default"}])
    provider(make_provider, "corp-default", "corp.com", verified=False)
    provider(make_provider, "corp", "corp.com", verified=True)
    assert client_of(sign_in(api, email="ada@corp.com")) == "corp-client"


def test_an_internationalised_domain_routes_to_its_idna_form(api, make_provider):
    provider(make_provider, "buecher", "xn--bcher-kva.example", verified=True)
    assert client_of(sign_in(api, domain="Bücher.example")) == "buecher-client"
    assert client_of(sign_in(api, email="ada@BÜCHER.example")) == "buecher-client"
