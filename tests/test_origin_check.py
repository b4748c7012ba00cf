"""The router-wide Origin check and login CSRF (core.md §1.8) and trusted origins (§1.9)."""

import logging

import pytest

from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient, error_of

EVIL = "https://evil.com"


@pytest.fixture
def browser(signed_in):
    """A signed-in client whose requests carry no Origin unless a test gives one."""
    signed_in.origin = None
    return signed_in


def revoke_others(client, **headers):
    return client.api_post("/revoke-other-sessions", **headers)


def sign_in(client, **headers):
    return client.api_post("/sign-in/email", {"email": "ada@example.com", "password": PASSWORD},
                           **headers)


# --- router-wide check -------------------------------------------------------------------------
def test_cookie_carrying_post_without_origin_is_403_missing_or_null_origin(browser):
    response = revoke_others(browser)
    assert response.status_code == 403
    assert error_of(response) == {"message": "Missing or null Origin",
                                  "code": "MISSING_OR_NULL_ORIGIN", "status": 403}


def test_origin_null_is_403_missing_or_null_origin(browser):
    assert error_of(revoke_others(browser, HTTP_ORIGIN="null"))["code"] == "MISSING_OR_NULL_ORIGIN"


def test_an_empty_origin_without_referer_is_403_missing_or_null_origin(browser):
    assert error_of(revoke_others(browser, HTTP_ORIGIN=""))["code"] == "MISSING_OR_NULL_ORIGIN"


def test_an_untrusted_origin_is_403_invalid_origin(browser):
    response = revoke_others(browser, HTTP_ORIGIN=EVIL)
    assert response.status_code == 403
    assert error_of(response) == {"message": "Invalid origin", "code": "INVALID_ORIGIN", "status": 403}


def test_the_trusted_origin_passes(browser):
    assert revoke_others(browser, HTTP_ORIGIN="http://127.0.0.1:8000").status_code == 200


def test_a_look_alike_origin_is_untrusted(browser):
    for origin in ("http://127.0.0.1:8001", "https://127.0.0.1:8000"):
        assert error_of(revoke_others(browser, HTTP_ORIGIN=origin))["code"] == "INVALID_ORIGIN", origin


def test_an_origin_header_that_does_not_parse_is_untrusted(browser):
    for origin in ("http://127.0.0.1:8000.evil.com", "http://[bad", "http://127.0.0.1:1:2"):
        response = revoke_others(browser, HTTP_ORIGIN=origin)
        assert response.status_code == 403, origin
        assert error_of(response)["code"] == "INVALID_ORIGIN", origin


def test_the_referer_origin_is_used_when_origin_is_absent(browser):
    response = revoke_others(browser, HTTP_REFERER="http://127.0.0.1:8000/settings/security?tab=1")
    assert response.status_code == 200


def test_an_untrusted_referer_is_403_invalid_origin(browser):
    response = revoke_others(browser, HTTP_REFERER="https://evil.com/page")
    assert error_of(response)["code"] == "INVALID_ORIGIN"


def test_origin_wins_over_referer(browser):
    response = revoke_others(browser, HTTP_ORIGIN=EVIL, HTTP_REFERER="http://127.0.0.1:8000/")
    assert error_of(response)["code"] == "INVALID_ORIGIN"


def test_any_cookie_at_all_triggers_the_check(api, db):
    api.origin = None
    api.cookies["unrelated"] = "1"
    assert error_of(api.api_post("/sign-out"))["code"] == "MISSING_OR_NULL_ORIGIN"


def test_a_cookie_less_post_from_a_foreign_origin_passes_the_check(api, db):
    response = api.api_post("/sign-out", HTTP_ORIGIN=EVIL)
    assert response.status_code == 200
    assert response.json() == {"success": True}


def test_a_cookie_less_foreign_post_reaches_the_guard(api, db):
    assert error_of(api.api_post("/update-session", {}, HTTP_ORIGIN=EVIL))["code"] == "UNAUTHORIZED"


def test_get_requests_are_not_origin_checked(browser):
    response = browser.api_get("/get-session", HTTP_ORIGIN=EVIL)
    assert response.json()["session"]["token"] == browser.token


def test_a_rejected_request_changes_nothing(browser):
    other = ApiClient()
    other_token = sign_in(other).json()["token"]
    revoke_others(browser, HTTP_ORIGIN=EVIL)
    assert Session.objects.filter(token=other_token).exists()


def test_the_origin_check_runs_before_validation(browser):
    response = browser.api_post("/revoke-session", {}, HTTP_ORIGIN=EVIL)
    assert error_of(response)["code"] == "INVALID_ORIGIN"


def test_disable_origin_check_setting_switches_it_off(configure, browser):
    configure(disable_origin_check=True)
    assert revoke_others(browser, HTTP_ORIGIN=EVIL).status_code == 200


# --- login CSRF --------------------------------------------------------------------------------
def test_sign_in_from_a_server_without_any_header_is_allowed(user):
    assert sign_in(ApiClient(origin=None)).status_code == 200


def test_sign_in_without_cookie_from_an_untrusted_origin_is_403(user):
    response = sign_in(ApiClient(origin=EVIL))
    assert error_of(response)["code"] == "INVALID_ORIGIN"
    assert not Session.objects.exists()


def test_sign_up_without_cookie_from_an_untrusted_origin_is_403(db):
    response = ApiClient(origin=EVIL).api_post(
        "/sign-up/email", {"name": "A", "email": "a@example.com", "password": PASSWORD})
    assert error_of(response)["code"] == "INVALID_ORIGIN"


def test_sign_in_with_an_untrusted_referer_is_403(user):
    response = sign_in(ApiClient(origin=None), HTTP_REFERER="https://evil.com/login")
    assert error_of(response)["code"] == "INVALID_ORIGIN"


def test_cross_site_navigation_login_is_blocked(user):
    response = sign_in(ApiClient(origin=None), HTTP_SEC_FETCH_SITE="cross-site",
                       HTTP_SEC_FETCH_MODE="navigate", HTTP_SEC_FETCH_DEST="document")
    assert response.status_code == 403
    assert error_of(response) == {"message": "Cross-site navigation login blocked",
                                  "code": "CROSS_SITE_NAVIGATION_LOGIN_BLOCKED", "status": 403}


def test_cross_site_navigation_sign_up_is_blocked(db):
    response = ApiClient(origin=EVIL).api_post(
        "/sign-up/email", {"name": "A", "email": "a@example.com", "password": PASSWORD},
        HTTP_SEC_FETCH_SITE="cross-site", HTTP_SEC_FETCH_MODE="navigate")
    assert error_of(response)["code"] == "CROSS_SITE_NAVIGATION_LOGIN_BLOCKED"


def test_fetch_metadata_without_origin_is_403_missing_or_null_origin(user):
    response = sign_in(ApiClient(origin=None), HTTP_SEC_FETCH_SITE="same-origin",
                       HTTP_SEC_FETCH_MODE="cors")
    assert error_of(response)["code"] == "MISSING_OR_NULL_ORIGIN"


def test_fetch_metadata_with_the_trusted_origin_is_allowed(user):
    response = sign_in(ApiClient(), HTTP_SEC_FETCH_SITE="same-origin", HTTP_SEC_FETCH_MODE="cors")
    assert response.status_code == 200


def test_cross_site_cors_fetch_from_an_untrusted_origin_is_invalid_origin(user):
    response = sign_in(ApiClient(origin=EVIL), HTTP_SEC_FETCH_SITE="cross-site",
                       HTTP_SEC_FETCH_MODE="cors")
    assert error_of(response)["code"] == "INVALID_ORIGIN"


def test_sec_fetch_dest_alone_counts_as_fetch_metadata(user):
    response = sign_in(ApiClient(origin=None), HTTP_SEC_FETCH_DEST="empty")
    assert error_of(response)["code"] == "MISSING_OR_NULL_ORIGIN"


def test_sign_in_with_a_cookie_needs_a_trusted_origin(user):
    client = ApiClient(origin=None)
    client.cookies["something"] = "1"
    assert error_of(sign_in(client))["code"] == "MISSING_OR_NULL_ORIGIN"


def test_login_csrf_runs_after_schema_validation(db):
    response = ApiClient(origin=EVIL).api_post("/sign-in/email", {})
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"


# --- trusted origins ---------------------------------------------------------------------------
@pytest.mark.parametrize("origin", ["https://app.example.com", "https://a.example.com"])
def test_an_origin_glob_with_scheme_matches_subdomains(configure, browser, origin):
    configure(trusted_origins=["https://*.example.com"])
    assert revoke_others(browser, HTTP_ORIGIN=origin).status_code == 200


@pytest.mark.parametrize("origin", ["http://app.example.com", "https://app.example.com.evil.com",
                                    "https://evil.com", "https://example.org"])
def test_an_origin_glob_with_scheme_rejects_others(configure, browser, origin):
    configure(trusted_origins=["https://*.example.com"])
    assert error_of(revoke_others(browser, HTTP_ORIGIN=origin))["code"] == "INVALID_ORIGIN"


@pytest.mark.parametrize("origin", ["https://app.example.com", "http://app.example.com",
                                    "http://app.example.com:3000"])
def test_a_host_glob_matches_the_host_under_http_or_https(configure, browser, origin):
    configure(trusted_origins=["*.example.com"])
    assert revoke_others(browser, HTTP_ORIGIN=origin).status_code == 200


def test_a_host_glob_rejects_other_hosts(configure, browser):
    configure(trusted_origins=["*.example.com"])
    assert error_of(revoke_others(browser, HTTP_ORIGIN="https://example.com.evil.com"))["code"] == \
        "INVALID_ORIGIN"


def test_an_ipv6_glob_matches_any_port_of_that_address(configure, browser):
    configure(trusted_origins=["http://[::1]:*"])
    assert revoke_others(browser, HTTP_ORIGIN="http://[::1]:3000").status_code == 200


@pytest.mark.parametrize("origin", ["http://1:3000", "http://[::2]:3000"])
def test_brackets_in_a_glob_are_literal_not_a_character_class(configure, browser, origin):
    configure(trusted_origins=["http://[::1]:*"])
    assert error_of(revoke_others(browser, HTTP_ORIGIN=origin))["code"] == "INVALID_ORIGIN"


def test_an_ipv6_glob_of_any_port_names_its_host_exactly(configure):
    from authservice import origins

    configure(trusted_origins=["http://[::1]:*"])
    assert origins.is_exact_trusted_origin("http://[::1]:8080/callback")


def test_a_plain_trusted_origin_matches_exactly(configure, browser):
    configure(trusted_origins=["https://app.example.com"])
    assert revoke_others(browser, HTTP_ORIGIN="https://app.example.com").status_code == 200
    assert revoke_others(browser, HTTP_ORIGIN="https://app.example.com:443").status_code == 200
    assert error_of(revoke_others(browser, HTTP_ORIGIN="https://www.example.com"))["code"] == \
        "INVALID_ORIGIN"


def test_a_trailing_slash_on_a_trusted_entry_does_not_matter(configure, browser):
    configure(trusted_origins=["https://app.example.com/"])
    assert revoke_others(browser, HTTP_ORIGIN="https://app.example.com").status_code == 200


def test_the_base_url_origin_is_always_trusted(configure, user):
    configure(base_url="https://auth.example.com", trusted_origins=["https://other.example.com"])
    assert sign_in(ApiClient(origin="https://auth.example.com")).status_code == 200


def test_plugins_can_add_trusted_origins(browser):
    from authservice import origins

    origins.add_trusted_origins(["https://plugin.example.com"])
    try:
        assert revoke_others(browser, HTTP_ORIGIN="https://plugin.example.com").status_code == 200
    finally:
        origins._extra_origins.remove("https://plugin.example.com")
        origins.reset()


def test_a_custom_scheme_origin_is_trusted_when_listed(configure, browser):
    configure(trusted_origins=["myapp://"])
    assert revoke_others(browser, HTTP_ORIGIN="myapp://").status_code == 200
    assert error_of(revoke_others(browser, HTTP_ORIGIN="otherapp://"))["code"] == "INVALID_ORIGIN"


# --- the log of a refusal ----------------------------------------------------------------------
@pytest.fixture
def origin_log(caplog):
    """INFO records of ``authservice.origins`` (the example project stops ``authservice`` propagating)."""
    logger = logging.getLogger("authservice.origins")
    logger.addHandler(caplog.handler)
    with caplog.at_level(logging.INFO, logger="authservice.origins"):
        yield caplog
    logger.removeHandler(caplog.handler)


def refusals(log):
    return [record for record in log.records if record.name == "authservice.origins"]


def test_a_refused_origin_is_logged_at_info_with_the_trusted_list(configure, browser, origin_log):
    configure(trusted_origins=["https://app.example.com"])
    revoke_others(browser, HTTP_ORIGIN=EVIL)
    [record] = refusals(origin_log)
    assert record.levelno == logging.INFO
    assert "'https://evil.com'" in record.getMessage()
    assert "http://127.0.0.1:8000, https://app.example.com" in record.getMessage()


def test_a_refused_login_from_an_untrusted_page_is_logged(user, origin_log):
    sign_in(ApiClient(origin=EVIL))
    assert "'https://evil.com'" in refusals(origin_log)[0].getMessage()


def test_a_missing_origin_is_logged_as_missing(browser, origin_log):
    revoke_others(browser)
    assert "without an Origin" in refusals(origin_log)[0].getMessage()


def test_a_trusted_origin_logs_nothing(browser, origin_log):
    revoke_others(browser, HTTP_ORIGIN="http://127.0.0.1:8000")
    assert refusals(origin_log) == []


def test_the_logged_origin_is_quoted_so_it_cannot_forge_a_line(configure, browser, origin_log):
    revoke_others(browser, HTTP_ORIGIN="https://evil.com\rINFO forged")
    message = refusals(origin_log)[0].getMessage()
    assert "\r" not in message and "\n" not in message
