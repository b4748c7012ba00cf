"""System checks on AUTHSERVICE_SSO's values: each kind of mistake has its own stable id and a hint."""

import pytest

from sso.checks import check_setting_values


def problems(configure_sso, **overrides):
    configure_sso(**overrides)
    return check_setting_values()


def ids(configure_sso, **overrides):
    return {problem.id for problem in problems(configure_sso, **overrides)}


def provision_user(**kwargs):
    """A hook for the test below: a real callable on the Python path."""


def test_the_test_settings_give_no_problem(configure_sso):
    assert problems(configure_sso) == []


@pytest.mark.parametrize(("overrides", "check_id"), [
    pytest.param({"nope": 1}, "sso.E001", id="E001-unknown-key"),
    pytest.param({"organization_provisioning": {"default_role": "owner"}}, "sso.E002", id="E002-role"),
    pytest.param({"saml": {"algorithms": {"on_deprecated": "ignore"}}}, "sso.E003", id="E003-on-deprecated"),
    pytest.param({"trust_any_email_domain": "okta"}, "sso.E011", id="E011-string-not-list"),
    pytest.param({"domain_verification": {"enabled": "true"}}, "sso.E011", id="E011-bool"),
    pytest.param({"saml": {"algorithms": {"allowed_digest_algorithms": "sha256"}}}, "sso.E011",
                 id="E011-allow-list"),
    pytest.param({"default_sso": [{"provider_id": "okta", "oidc_config": "x"}]}, "sso.E011",
                 id="E011-default-sso-config"),
    pytest.param({"domain_verification": {"token_expires_in": 0}}, "sso.E012", id="E012-duration-zero"),
    pytest.param({"providers_limit": -1}, "sso.E012", id="E012-negative-limit"),
    pytest.param({"discovery_timeout": 0}, "sso.E012", id="E012-timeout"),
    pytest.param({"saml": {"idp_initiated_callback_url": "javascript:alert(1)"}}, "sso.E014", id="E014-url"),
    pytest.param({"provision_user": "myproject.hooks.provision"}, "sso.E015", id="E015-provision-user"),
    pytest.param({"organization_provisioning": {"get_role": "os.path.sep"}}, "sso.E015",
                 id="E015-get-role-not-callable"),
    pytest.param({"resolve_private_key": "myproject.keys.resolve"}, "sso.E015", id="E015-resolve-private-key"),
    pytest.param({"dns_nameservers": ["10.0.0.2:dns"]}, "sso.E016", id="E016-nameserver-port"),
    pytest.param({"default_sso": [{"domain": "acme.com"}]}, "sso.E017", id="E017-default-sso-without-id"),
    pytest.param({"domain_verification": {"enabled": False}, "trust_any_email_domain": ["okta"]}, "sso.W001",
                 id="W001-trust-without-verification"),
    pytest.param({"saml": {"algorithms": {"on_deprecated": "allow"}}}, "sso.W002", id="W002-allow-sha1"),
])
def test_a_bad_value_is_reported_with_its_id(configure_sso, overrides, check_id):
    assert check_id in ids(configure_sso, **overrides)


def test_every_problem_has_a_hint(configure_sso):
    found = problems(configure_sso, dns_nameservers="x:y", provision_user="nowhere.f", providers_limit="10")
    assert found and all(problem.hint for problem in found)


def test_a_dotted_path_or_the_callable_itself_passes(configure_sso):
    assert problems(configure_sso, provision_user="tests.sso.test_settings_checks.provision_user") == []
    assert problems(configure_sso, provision_user=provision_user) == []


def test_nameservers_may_be_one_comma_separated_string_as_the_resolver_reads_them(configure_sso):
    assert problems(configure_sso, dns_nameservers="127.0.0.1:5353, [::1]:53, ::1") == []


def test_a_settings_dict_that_is_no_dict_is_one_error(settings):
    settings.AUTHSERVICE_SSO = "domain_verification"
    assert [problem.id for problem in check_setting_values()] == ["sso.E011"]


@pytest.mark.parametrize("odd", [None, 1.5, b"bytes", object(), {1: 2}, [[]], [{"provider_id": object()}]])
def test_no_check_raises_on_an_odd_value(configure_sso, odd):
    for key in ("domain_verification", "dns_nameservers", "default_sso", "saml", "provision_user",
                "organization_provisioning", "trust_any_email_domain"):
        assert problems(configure_sso, **{key: odd}) is not None
