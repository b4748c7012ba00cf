"""AUTHSERVICE["cookie_attributes"]["same_site"]: better-auth's advanced.defaultCookieAttributes.sameSite.

Every cookie we set carries the configured SameSite ("lax" by default), except that "strict" leaves
the OAuth state cookie "lax" (it must come back on the provider's redirect, a navigation from another
site) and the SAML relay_state cookie keeps its own rule (None on https, Lax on http).
"""

import pytest

from authservice.cookies import signed_value
from tests.conftest import ApiClient
from tests.test_cookies import make_session, set_cookies, sign_in

pytestmark = pytest.mark.django_db

HTTPS = "https://auth.example.com"


@pytest.fixture
def https_api(configure):
    """SameSite=None needs Secure cookies, hence an https base URL."""
    configure(base_url=HTTPS)
    return ApiClient(origin=HTTPS)


def same_sites(response):
    return {name: attrs.get("samesite") for name, (_, attrs) in set_cookies(response).items()}


def test_the_default_is_lax(api, user):
    assert set(same_sites(sign_in(api, rememberMe=False)).values()) == {"Lax"}


@pytest.mark.parametrize(("configured", "sent"), [("strict", "Strict"), ("none", "None"), ("lax", "Lax")])
def test_sign_in_cookies_carry_the_configured_same_site(configure, https_api, user, configured, sent):
    configure(cookie_attributes={"same_site": configured})
    cookies = same_sites(sign_in(https_api, rememberMe=False))
    assert cookies == {"__Secure-auth.session_token": sent, "__Secure-auth.dont_remember": sent}


def test_same_site_none_cookies_are_secure(configure, https_api, user):
    configure(cookie_attributes={"same_site": "none"})
    for _, attrs in set_cookies(sign_in(https_api)).values():
        assert attrs["samesite"] == "None" and attrs["secure"] is True


def test_sign_out_deletion_cookies_carry_the_configured_same_site(configure, https_api, user):
    configure(cookie_attributes={"same_site": "none"})
    sign_in(https_api)
    response = https_api.api_post("/sign-out")
    assert response.status_code == 200
    assert set(same_sites(response).values()) == {"None"}
    assert len(same_sites(response)) == 3


def test_a_refreshed_session_cookie_carries_the_configured_same_site(configure, api, user):
    configure(cookie_attributes={"same_site": "strict"})
    session = make_session(user, age=2 * 86400)  # past update_age: the next read refreshes it
    api.cookies["auth.session_token"] = signed_value(session.token)
    response = api.api_get("/get-session")
    assert response.json()["session"]["token"] == session.token
    assert same_sites(response) == {"auth.session_token": "Strict"}


@pytest.fixture
def github(configure):
    configure(social_providers={"github": {"clientId": "gh-client", "clientSecret": "gh-secret"}})


def test_the_oauth_state_cookie_carries_none_when_configured(configure, https_api, github):
    configure(cookie_attributes={"same_site": "none"})
    response = https_api.api_post("/sign-in/social", {"provider": "github", "callbackURL": "/home"})
    assert response.status_code == 200, response.content
    assert same_sites(response) == {"__Secure-auth.state": "None"}


def test_strict_leaves_the_oauth_state_cookie_lax_so_the_provider_redirect_brings_it_back(configure, api, github):
    configure(cookie_attributes={"same_site": "strict"})
    response = api.api_post("/sign-in/social", {"provider": "github", "callbackURL": "/home"})
    assert same_sites(response) == {"auth.state": "Lax"}
