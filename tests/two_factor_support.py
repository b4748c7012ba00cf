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


@pytest.fixture
def otp_enrolled(signed_in):
    """``signed_in`` with e-mail codes as their second factor (``method: "otp"``, no TOTP)."""
    enabled = signed_in.api_post("/two-factor/enable", {"password": PASSWORD, "method": "otp"})
    assert enabled.status_code == 200, enabled.content
    return signed_in


# --- two_factor.required_for ---------------------------------------------------------------------
STAFF_EMAIL = "staff@example.com"


def has_field(name):
    from django.contrib.auth import get_user_model

    return any(field.name == name for field in get_user_model()._meta.get_fields())


@pytest.fixture
def staff_required(configure):
    """``required_for = ["is_staff", "is_superuser"]``, as the docs suggest."""
    if not has_field("is_staff"):
        pytest.skip("the user model has no staff flag")
    configure(two_factor={"required_for": ["is_staff", "is_superuser"]})


@pytest.fixture
def staff(make_user, staff_required):
    """A staff user the policy names, with a password and no second factor yet."""
    return make_user(email=STAFF_EMAIL, is_staff=True)


def password_sign_in(email):
    client = ApiClient()
    response = client.api_post("/sign-in/email", {"email": email, "password": PASSWORD})
    assert response.status_code == 200, response.content
    assert "token" in response.json(), response.json()
    return client


@pytest.fixture
def pending(staff):
    """A browser signed in by password as ``staff``: a session that may only enrol a second factor."""
    client = password_sign_in(staff.email)
    client.user = staff
    return client
