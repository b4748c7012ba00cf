"""Helpers of the Single Logout tests: a provider whose IdP offers SLO, and the two SLO URLs."""

from urllib.parse import urlsplit

import pytest

from tests.conftest import BASE

REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
FORM = "application/x-www-form-urlencoded"


def logout_path(provider_id):
    return f"{BASE}/sso/saml2/logout/{provider_id}"


def slo_path(provider_id):
    return f"{BASE}/sso/saml2/sp/slo/{provider_id}"


def local(url):
    """Path and query of one of our URLs, for the Django test client."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@pytest.fixture
def slo_enabled(configure_sso):
    configure_sso(saml={"enable_single_logout": True})


@pytest.fixture
def slo_provider(slo_enabled, saml_provider, saml_idp):
    """``slo_provider(name, bindings=("redirect", "post"), **options)``: a samlify-backed provider
    with an SP signing key whose IdP lists its SingleLogoutService in idpMetadata."""

    def create(name="acme-saml", bindings=(REDIRECT, POST), **options):
        services = [{"Binding": binding, "Location": f"{saml_idp.url}/slo/{name}"} for binding in bindings]
        options.setdefault("sign_requests", True)
        return saml_provider(name, idpMetadata={"entityID": saml_idp.entity_id(name),
                                                "singleLogoutService": services}, **options)

    return create
