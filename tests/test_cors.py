"""CORS for SPAs on other origins: the example project answers preflights for the trusted origins.

django-cors-headers answers; project/cors.py turns the trusted origins into its allow-lists, globs into
anchored regexes that match what authservice.origins matches. The Origin check itself is unchanged
(tests/test_origin_check.py): CORS only lets a trusted page read the answers.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from authservice import origins
from project.cors import allowed_origins
from tests.conftest import BASE, ORIGIN

ROOT = Path(__file__).resolve().parent.parent
APP = "https://app.example.com"
GLOB = "https://*.example.com"


@pytest.fixture
def trust(settings, configure):
    """``trust(*entries)``: trusted by authservice and by CORS, as AUTH_TRUSTED_ORIGINS does."""

    def apply(*entries):
        configure(trusted_origins=list(entries))
        settings.CORS_ALLOWED_ORIGINS, settings.CORS_ALLOWED_ORIGIN_REGEXES = allowed_origins([ORIGIN, *entries])

    return apply


def preflight(origin, path="/sign-up/email", headers="content-type"):
    return Client().options(BASE + path, HTTP_ORIGIN=origin, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
                            HTTP_ACCESS_CONTROL_REQUEST_HEADERS=headers)


# --- preflights --------------------------------------------------------------------------------
def test_a_preflight_from_a_trusted_origin_is_allowed_with_credentials(trust):
    trust(APP)
    response = preflight(APP)
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == APP
    assert response["Access-Control-Allow-Credentials"] == "true"
    assert "POST" in response["Access-Control-Allow-Methods"]


def test_a_preflight_from_an_untrusted_origin_gets_no_cors_headers(trust):
    trust(APP)
    response = preflight("https://evil.com")
    assert "Access-Control-Allow-Origin" not in response
    assert "Access-Control-Allow-Credentials" not in response


def test_the_base_urls_origin_is_allowed(trust):
    trust()
    assert preflight(ORIGIN)["Access-Control-Allow-Origin"] == ORIGIN


def test_the_preflight_allows_the_headers_better_auths_client_sends(trust):
    trust(APP)
    allowed = {name.strip() for name in preflight(APP)["Access-Control-Allow-Headers"].split(",")}
    assert {"content-type", "authorization"} <= allowed


def test_the_bearer_token_header_is_exposed_to_the_page(trust, db):
    trust(APP)
    response = Client().get(BASE + "/get-session", HTTP_ORIGIN=APP)
    assert response["Access-Control-Allow-Origin"] == APP
    assert response["Access-Control-Expose-Headers"] == "set-auth-token"


def test_pages_outside_the_api_get_no_cors_headers(trust, db):
    trust(APP)
    assert "Access-Control-Allow-Origin" not in Client().get("/admin/login/", HTTP_ORIGIN=APP)


# --- globs -------------------------------------------------------------------------------------
def test_a_glob_origin_allows_a_subdomain(trust):
    trust(GLOB)
    assert preflight("https://app.example.com")["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert preflight("https://a.b.example.com")["Access-Control-Allow-Origin"] == "https://a.b.example.com"


@pytest.mark.parametrize("origin", [
    "https://evil-example.com", "https://x.example.com.evil.com", "http://x.example.com",
    "https://example.com", "https://evil.com/.example.com", "https://evil.com#.example.com",
    "https://user@x.example.com", "https://x.example.com:1.example.com", "https://x.example.com\n",
])
def test_a_glob_origin_allows_no_look_alike(trust, origin):
    trust(GLOB)
    assert "Access-Control-Allow-Origin" not in preflight(origin)


ENTRIES = ["https://*.example.com", "*.example.com", "http://127.0.0.1:*", "https://app-?.example.com",
           "https://App.Example.com/", "http://127.0.0.1:3000/path", "myapp://", "javascript://*.example.com",
           "http://[::1]:*"]
# As browsers serialise an Origin: lower case, no default port.
ORIGINS = ["https://app.example.com", "http://app.example.com", "https://app.example.com:8443",
           "https://evil-example.com", "https://x.example.com.evil.com",
           "http://127.0.0.1:3000", "http://127.0.0.1", "https://127.0.0.1:3000", "http://127.0.0.2:3000",
           "https://app-1.example.com", "https://app-12.example.com", "javascript://x.example.com", "myapp://",
           "http://[::1]:3000", "http://[::2]:3000", "http://1:3000"]


@pytest.mark.parametrize("entry", ENTRIES)
def test_cors_allows_exactly_the_browser_origins_the_origin_check_trusts(settings, configure, entry):
    configure(base_url=None, trusted_origins=[entry])
    settings.CORS_ALLOWED_ORIGINS, settings.CORS_ALLOWED_ORIGIN_REGEXES = allowed_origins([entry])
    for origin in ORIGINS:
        expected = origins.is_trusted_origin(origin) and origin.startswith(("http://", "https://"))
        assert ("Access-Control-Allow-Origin" in preflight(origin)) == expected, (entry, origin)


def test_every_regex_is_anchored_at_both_ends():
    _, regexes = allowed_origins(ENTRIES)
    assert regexes
    for regex in regexes:
        assert regex.startswith("(?i)^") and regex.endswith(r"\Z"), regex


def test_custom_schemes_are_left_to_native_apps():
    assert allowed_origins(["myapp://", "exp://192.168.1.2:8081", "javascript://*.example.com"]) == ([], [])


def test_the_example_project_reads_auth_trusted_origins_into_the_cors_settings():
    env = {**os.environ, "AUTH_TRUSTED_ORIGINS": "https://app.example.com,https://*.example.com",
           "AUTH_BASE_URL": "https://auth.example.com", "DJANGO_SETTINGS_MODULE": "project.settings"}
    code = ("from django.conf import settings; import json; print(json.dumps([settings.CORS_ALLOWED_ORIGINS, "
            "settings.CORS_ALLOWED_ORIGIN_REGEXES, settings.CORS_ALLOW_CREDENTIALS]))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=True)
    exact, regexes, credentials = json.loads(result.stdout)
    assert exact == ["https://auth.example.com", "https://app.example.com"]
    assert len(regexes) == 1 and re.match(regexes[0], "https://x.example.com")
    assert credentials is True
