"""Fixtures shared by every test: an HTTP client that behaves like a browser SPA, users, sessions.

The rate limiter is off unless a test turns it on (``configure(rate_limit={"enabled": True})``), as
better-auth's tests and benchmarks do; every other protection stays on [D13].
"""

import copy
import json

import pytest
from django.test import Client

from authservice import app_settings
from project import mailers

ORIGIN = "http://127.0.0.1:8000"  # the example project's AUTH_BASE_URL, hence trusted
BASE = "/api/auth"
PASSWORD = "correct horse battery"


def pytest_configure(config):
    # project/settings.py silences this too; pytest resets warning filters around each test. STATIC_ROOT
    # exists only after `collectstatic`, and WhiteNoise serves from the apps' directories meanwhile.
    config.addinivalue_line("filterwarnings", "ignore:No directory at:UserWarning")


def _deep_merge(base, overrides):
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(merged.get(key), dict) and isinstance(value, dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


@pytest.fixture(autouse=True)
def _test_defaults(settings):
    settings.AUTHSERVICE = _deep_merge(settings.AUTHSERVICE, {
        "base_url": ORIGIN, "rate_limit": {"enabled": False, "storage": "database"}, "trusted_origins": [],
    })
    if mailers.uses_mailers():
        settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    else:
        settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    # Fast hashing in tests; argon2 and better-auth's scrypt are exercised by their own tests
    # (tests/test_hashers.py). MD5 alone: every sign-in runs each configured hasher once (I7).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    yield


@pytest.fixture
def configure(settings):
    """``configure(session={"fresh_age": 0})``: change AUTHSERVICE settings for one test."""

    def apply(**overrides):
        settings.AUTHSERVICE = _deep_merge(settings.AUTHSERVICE, overrides)
        return app_settings

    return apply


class ApiClient(Client):
    """A Django test client speaking JSON to the base path, sending a trusted Origin like an SPA."""

    def __init__(self, origin=ORIGIN, **kwargs):
        super().__init__(**kwargs)
        self.origin = origin

    def _headers(self, extra):
        if self.origin and "HTTP_ORIGIN" not in extra:
            extra["HTTP_ORIGIN"] = self.origin
        return extra

    def api_get(self, path, query=None, **extra):
        return self.get(BASE + path, query or {}, **self._headers(extra))

    def api_post(self, path, body=None, **extra):
        data = json.dumps(body) if body is not None else ""
        content_type = extra.pop("content_type", "application/json")
        return self.generic("POST", BASE + path, data, content_type=content_type, **self._headers(extra))


@pytest.fixture
def api():
    return ApiClient()


@pytest.fixture
def make_user(db):
    """``make_user(email=..., email_verified=True, is_active=False)``: a user of whatever AUTH_USER_MODEL is."""
    from authservice import users
    from authservice.models import Account

    def create(email="ada@example.com", password=PASSWORD, name="Ada", **extra):
        user = users.create(email=email, password=password, name=name, **extra)
        if password is None:
            # A credential account without a usable password yet: tests then store an imported hash.
            Account.objects.create(provider_id=Account.CREDENTIAL, account_id=str(user.pk), user=user)
        return user

    return create


def set_updated_at(user, when):
    """Store ``when`` as the user's updatedAt without touching anything else (any user model)."""
    from django.contrib.auth import get_user_model

    from authservice import users
    from authservice.models import AuthProfile

    field = users.layout().updated
    if field:
        get_user_model().objects.filter(pk=user.pk).update(**{field: when})
    else:
        users.profile_of(user)
        AuthProfile.objects.filter(user=user).update(updated_at=when)


@pytest.fixture
def user(make_user):
    return make_user()


@pytest.fixture
def signed_in(api, user):
    """An ApiClient holding a session cookie of ``user``."""
    response = api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 200, response.content
    api.user = user
    api.token = response.json()["token"]
    return api


def error_of(response):
    """The error body, checked for the exact shape {message, code, status}."""
    body = response.json()
    assert set(body) == {"message", "code", "status"}, body
    assert body["status"] == response.status_code
    return body
