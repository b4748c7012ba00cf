"""GET /ok and GET /error (core.md §4.1, §4.2)."""

import pytest

from tests.conftest import BASE


def test_ok_answers_ok_true(api, db):
    response = api.api_get("/ok")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.content == b'{"ok":true}'


def test_ok_needs_no_origin_or_session(db, client):
    assert client.get(BASE + "/ok").json() == {"ok": True}


def test_error_in_production_redirects_to_the_site_root_with_the_code(api, db, settings):
    settings.DEBUG = False
    response = api.api_get("/error", {"error": "access_denied"})
    assert response.status_code == 302
    assert response["Location"] == "/?error=access_denied"
    assert response.content == b""


def test_error_redirect_keeps_the_description(api, db, settings):
    settings.DEBUG = False
    response = api.api_get("/error", {"error": "access_denied", "error_description": "User said no"})
    assert response["Location"] == "/?error=access_denied&error_description=User+said+no"


@pytest.mark.parametrize("code", ["<script>", "a b", "a/b", "x\"y", ""])
def test_an_error_code_outside_the_safe_alphabet_becomes_unknown(api, db, settings, code):
    settings.DEBUG = False
    response = api.api_get("/error", {"error": code})
    assert response["Location"] == "/?error=UNKNOWN"


def test_no_error_parameter_is_unknown(api, db, settings):
    settings.DEBUG = False
    assert api.api_get("/error")["Location"] == "/?error=UNKNOWN"


def test_apostrophes_dashes_and_underscores_are_kept(api, db, settings):
    settings.DEBUG = False
    assert api.api_get("/error", {"error": "it's-a_CODE9"})["Location"] == "/?error=it%27s-a_CODE9"


def test_a_configured_error_url_receives_both_parameters(api, db, configure):
    configure(error_url="https://app.example.com/auth/error?from=auth")
    response = api.api_get("/error", {"error": "invalid_state", "error_description": "bad"})
    assert response.status_code == 302
    assert response["Location"] == \
        "https://app.example.com/auth/error?from=auth&error=invalid_state&error_description=bad"


def test_error_in_debug_shows_an_html_page_with_the_code(api, db, settings):
    settings.DEBUG = True
    response = api.api_get("/error", {"error": "access_denied"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert b"access_denied" in response.content


def test_error_page_escapes_the_description(api, db, settings):
    settings.DEBUG = True
    response = api.api_get("/error", {"error": "x", "error_description": "<script>alert(1)</script>"})
    assert b"<script>alert(1)</script>" not in response.content
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in response.content


def test_error_with_a_repeated_parameter_is_a_validation_error(api, db):
    response = api.get(BASE + "/error?error=a&error=b")
    assert response.status_code == 400
    assert response.json()["message"] == "[query.error] Invalid input: expected string, received array"
