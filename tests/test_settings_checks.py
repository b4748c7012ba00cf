"""System checks on AUTHSERVICE's values: each kind of mistake has its own stable id and a hint.

Each row sets one bad value over the test settings and expects that id; the example project's own
settings produce no error at all.
"""

import pytest
from django.core.checks import run_checks

from authservice.checks import check_setting_values
from project import settings as project_settings


def problems(configure, **overrides):
    configure(**overrides)
    return check_setting_values()


def ids(configure, **overrides):
    return {problem.id for problem in problems(configure, **overrides)}


def test_the_example_projects_settings_pass_every_check(settings):
    settings.AUTHSERVICE = project_settings.AUTHSERVICE
    settings.AUTHSERVICE_SSO = project_settings.AUTHSERVICE_SSO
    assert [str(problem) for problem in run_checks() if problem.is_serious()] == []


def test_the_test_settings_give_no_settings_warning_either(configure):
    assert problems(configure) == []


@pytest.mark.parametrize(("overrides", "check_id"), [
    pytest.param({"nope": 1}, "authservice.E001", id="E001-unknown-key"),
    pytest.param({"base_path": "api/auth/"}, "authservice.E002", id="E002-base-path"),
    pytest.param({"trusted_origins": "https://app.example.com"}, "authservice.E003", id="E003-string-not-list"),
    pytest.param({"secure_cookies": "yes"}, "authservice.E003", id="E003-bool"),
    pytest.param({"session": "week"}, "authservice.E003", id="E003-section-not-dict"),
    pytest.param({"session": {"expires_in": 0}}, "authservice.E004", id="E004-duration-zero"),
    pytest.param({"session": {"fresh_age": -1}}, "authservice.E004", id="E004-negative"),
    pytest.param({"rate_limit": {"storage": "redis"}}, "authservice.E005", id="E005-choice"),
    pytest.param({"cookie_attributes": {"same_site": "Lax"}}, "authservice.E005", id="E005-same-site-case"),
    pytest.param({"base_url": "auth.example.com"}, "authservice.E006", id="E006-base-url-no-scheme"),
    pytest.param({"error_url": "javascript:alert(1)"}, "authservice.E006", id="E006-error-url"),
    pytest.param({"trusted_origins": ["app.example.com"]}, "authservice.E007", id="E007-origin-no-scheme"),
    pytest.param({"trusted_origins": ["http://[bad"]}, "authservice.E007", id="E007-origin-unparsable"),
    pytest.param({"adapter": "myproject.nowhere.Adapter"}, "authservice.E008", id="E008-import"),
    pytest.param({"adapter": "authservice.adapter.get_adapter"}, "authservice.E008", id="E008-not-a-class"),
    pytest.param({"cookie_prefix": "my app"}, "authservice.E009", id="E009-cookie-prefix"),
    pytest.param({"cookie_names": {"session_token": "sid;x"}}, "authservice.E009", id="E009-cookie-names"),
    pytest.param({"rate_limit": {"custom_rules": {"/sign-in/*": {"window": 10}}}}, "authservice.E010",
                 id="E010-rule-shape"),
    pytest.param({"rate_limit": {"custom_rules": {"sign-in": False}}}, "authservice.E010", id="E010-rule-path"),
    pytest.param({"social_providers": {"github": {"clientSecret": "s"}}}, "authservice.E011",
                 id="E011-no-client-id"),
    pytest.param({"social_providers": {"myidp": {"clientId": "c"}}}, "authservice.E011", id="E011-unknown"),
    pytest.param({"social_providers": {"corp": {"type": "oidc", "clientId": "c"}}}, "authservice.E011",
                 id="E011-oidc-without-issuer"),
    pytest.param({"email_and_password": {"min_password_length": 200}}, "authservice.E012",
                 id="E012-min-over-max"),
    pytest.param({"base_url": "https://auth.example.com/api"}, "authservice.W005", id="W005-base-url-path"),
    pytest.param({"trusted_origins": ["https://app.example.com/login"]}, "authservice.W006",
                 id="W006-origin-path"),
    pytest.param({"trusted_origins": ["https://*"]}, "authservice.W007", id="W007-glob-everything"),
    pytest.param({"trusted_origins": ["https://*[!x]*"]}, "authservice.W007", id="W007-glob-no-domain"),
    pytest.param({"trusted_origins": ["*example.com"]}, "authservice.W007", id="W007-glob-look-alikes"),
    pytest.param({"disable_origin_check": True}, "authservice.W008", id="W008-origin-check-off"),
    pytest.param({"secret": "short"}, "authservice.W009", id="W009-short-secret"),
    pytest.param({"rate_limit": {"custom_rules": {"/api/auth/sign-in/*": False}}}, "authservice.W010",
                 id="W010-rule-repeats-base-path"),
    pytest.param({"cookie_attributes": {"same_site": "none"}}, "authservice.W011",
                 id="W011-same-site-none-without-secure"),
])
def test_a_bad_value_is_reported_with_its_id(configure, overrides, check_id):
    assert check_id in ids(configure, **overrides)


def test_every_problem_has_a_hint(configure):
    found = problems(configure, trusted_origins="https://a.example", session={"expires_in": "1d"},
                     adapter="nowhere.Adapter", rate_limit={"storage": "redis"})
    assert found and all(problem.hint for problem in found)


def test_a_string_for_a_list_hints_at_the_list_it_meant(configure):
    [problem] = problems(configure, trusted_origins="https://app.example.com")
    assert "['https://app.example.com']" in problem.hint


def test_globs_and_custom_schemes_are_valid_trusted_origins(configure):
    assert problems(configure, trusted_origins=[
        "*.example.com", "https://*.example.com", "http://127.0.0.1:*", "myapp://", "exp://192.168.0.2:8081",
        "https://app-?.example.com", "http://[::1]:*",
    ]) == []


def test_an_import_error_names_the_path_and_the_reason(configure):
    [problem] = problems(configure, adapter="myproject.nowhere.Adapter")
    assert "myproject.nowhere.Adapter" in problem.msg and "No module named" in problem.msg


def test_a_module_that_raises_on_import_is_reported_not_raised(configure, tmp_path, monkeypatch):
    (tmp_path / "exploding_adapter.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    [problem] = problems(configure, adapter="exploding_adapter.Adapter")
    assert problem.id == "authservice.E008" and "boom" in problem.msg


def test_a_social_provider_class_is_imported(configure):
    found = ids(configure, social_providers={"corp": {"class": "myproject.NoProvider", "clientId": "c"}})
    assert found == {"authservice.E008"}


def test_a_settings_dict_that_is_no_dict_is_one_error(settings):
    settings.AUTHSERVICE = ["base_url", "https://auth.example.com"]
    assert "authservice.E003" in {problem.id for problem in check_setting_values()}


@pytest.mark.parametrize("odd", [None, 1.5, b"bytes", object(), {1: 2}, [[]], {"x": {"y": set()}}])
def test_no_check_raises_on_an_odd_value(configure, odd):
    for key in ("base_path", "base_url", "trusted_origins", "cookie_names", "adapter", "social_providers",
                "session", "rate_limit", "account_linking", "error_url"):
        assert problems(configure, **{key: odd}) is not None


def test_a_combination_is_only_checked_once_every_value_has_its_type(configure):
    found = ids(configure, email_and_password={"min_password_length": "8", "max_password_length": 4})
    assert found == {"authservice.E003"}


def test_same_site_none_over_https_gives_no_warning(configure):
    assert problems(configure, base_url="https://auth.example.com", cookie_attributes={"same_site": "none"}) == []


def test_same_site_none_with_forced_secure_cookies_gives_no_warning(configure):
    assert problems(configure, secure_cookies=True, cookie_attributes={"same_site": "none"}) == []
