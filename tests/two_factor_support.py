"""Helpers of the two-factor tests: enrol a user, read the secret from the TOTP URI, compute codes."""

import time
from urllib.parse import parse_qs, urlsplit

import pyotp
import pytest

from tests.conftest import PASSWORD, ApiClient


def secret_of(totp_uri):
    return parse_qs(urlsplit(totp_uri).query)["secret"][0]


def code(secret, offset_steps=0):
    return pyotp.TOTP(secret).at(time.time() + 30 * offset_steps)


def enrol(api):
    """Turn TOTP on for the signed-in ``api`` user; returns (secret, backup codes)."""
    enabled = api.api_post("/two-factor/enable", {"password": PASSWORD})
    assert enabled.status_code == 200, enabled.content
    secret = secret_of(enabled.json()["totpURI"])
    verified = api.api_post("/two-factor/verify-totp", {"code": code(secret, -1)})
    assert verified.status_code == 200, verified.content
    return secret, enabled.json()["backupCodes"]


def start_sign_in(email, password=PASSWORD, client=None):
    """A fresh browser that passed the password step; asserts the twoFactorRedirect answer."""
    client = client or ApiClient()
    response = client.api_post("/sign-in/email", {"email": email, "password": password})
    assert response.status_code == 200, response.content
    assert response.json()["twoFactorRedirect"] is True, response.json()
    return client


@pytest.fixture
def enrolled(signed_in):
    """``signed_in`` with TOTP on: ``.secret`` and ``.backup_codes`` set."""
    signed_in.secret, signed_in.backup_codes = enrol(signed_in)
    return signed_in
