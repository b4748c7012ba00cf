"""Fixtures of the passkey attack files: a victim with a registered passkey on a soft authenticator."""

import pytest

from tests.conftest import PASSWORD, ApiClient
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, register


def signed_in_client(user):
    client = ApiClient()
    response = client.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 200, response.content
    client.user = user
    return client


@pytest.fixture
def victim(make_user):
    """``(client, authenticator, passkey)``: a signed-in victim whose passkey is registered."""
    client = signed_in_client(make_user(email="victim@example.com"))
    authenticator = SoftAuthenticator(RP_ID, ORIGIN)
    response = register(client, authenticator)
    assert response.status_code == 200, response.content
    return client, authenticator, response.json()


@pytest.fixture
def attacker(make_user):
    return signed_in_client(make_user(email="attacker@example.com"))
