"""Attacks on the i13 surface that held (kept as regression tests)."""

import re

import pytest
from django.contrib.auth import get_user_model

from authservice import checks, origins, tokens, users
from project.cors import allowed_origins
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

ATTACKER_ORIGINS = ["https://evil.com", "https://evil-example.com", "https://x.example.com.evil.com",
                    "https://example.com.evil.com", "http://evil.com:8080", "https://evil.com#.example.com",
                    "null", "https://evil.com/.example.com"]


@pytest.mark.parametrize("entry", ["https://*.example.com", "*.example.com", "https://app?.example.com",
                                   "https://*.example.com:*", "*.example.com/", "https://*.Example.com/",
                                   "https://app.example.com:443", "http://127.0.0.1:*"])
def test_cors_never_lets_an_attacker_origin_read(configure, entry):
    exact, regexes = allowed_origins([entry])
    configure(base_url=None, trusted_origins=[entry])
    origins.reset()
    for origin in ATTACKER_ORIGINS:
        assert origin not in exact and not any(re.match(r, origin) for r in regexes), (entry, origin)
        try:
            assert not origins.is_trusted_origin(origin), (entry, origin)
        except origins.MalformedURL:
            pass


@pytest.mark.parametrize("values", [
    {"trusted_origins": ["http://[bad"]}, {"trusted_origins": [b"x"]}, {"trusted_origins": "https://a.com"},
    {"cookie_attributes": {"same_site": None}}, {"cookie_attributes": {"same_site": ["lax"]}},
    {"bearer": True}, {"bearer": None}, {"bearer": {"enabled": "false"}},
    {"adapter": "a..b"}, {"adapter": 5}, {"social_providers": {"x": {"type": ["oidc"], "clientId": "a"}}},
    {"social_providers": {5: {"clientId": "a"}}}, {"rate_limit": {"custom_rules": {5: {"window": 1, "max": 1}}}},
    {"email_and_password": {"min_password_length": float("nan")}}, {"session": {"expires_in": float("inf")}},
    {"base_url": "https://a.com:99999"}, {"account_linking": None},
])
def test_system_checks_report_hostile_values_and_never_crash(configure, values):
    configure(**values)
    origins.reset()
    problems = checks.check_setting_values()
    assert any(problem.is_serious() for problem in problems), values


@pytest.mark.parametrize("value", [
    "Bearer\t{signed}", "Bearer {signed}%00", "Bearer {signed}\x00", "Bearer {raw}\x00", "Bearer {raw}.",
    "Bearer " + "a" * 65, "Bearer {signed_true}", "Bearer%20{signed}", "Basic {signed}",
])
def test_odd_bearer_encodings_and_other_signed_values_name_no_session(configure, signed_in, value):
    configure(bearer={"enabled": True})
    signed = signed_in.cookies["auth.session_token"].value
    header = value.format(signed=signed, raw=signed_in.token, signed_true=tokens.sign("true"))
    response = ApiClient(origin=None).get("/api/auth/get-session", HTTP_AUTHORIZATION=header)
    assert response.status_code == 200 and response.json() is None, (value, response.content)


def test_a_user_from_before_authservice_is_not_taken_as_verified(db):
    if users.layout().own or users.layout().verified_in_model:
        pytest.skip("the model stores emailVerified itself")
    model = get_user_model()
    user = model(**{model.USERNAME_FIELD: "old", model.get_email_field_name(): "old@example.com"})
    user.set_password("x" * 12)
    user.save()
    assert users.is_email_verified(user) is False  # social/SSO implicit linking then refuses it
