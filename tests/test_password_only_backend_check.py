"""authservice.W013: Django's ModelBackend configured while two-factor authentication is on.

Django's backend signs in on a password alone (the admin's login form), skipping the second factor;
authservice.backends.ModelBackend refuses the users who have one (docs/mfa.md).
"""

from authservice.checks import check_settings

DJANGOS = "django.contrib.auth.backends.ModelBackend"
OURS = "authservice.backends.ModelBackend"


def ids(settings, backends):
    settings.AUTHENTICATION_BACKENDS = backends
    return {problem.id for problem in check_settings(None)}


def test_djangos_model_backend_with_two_factor_on_is_warned_about(settings, configure):
    configure(two_factor={"enabled": True})
    assert "authservice.W013" in ids(settings, [DJANGOS])


def test_ours_instead_is_fine(settings, configure):
    configure(two_factor={"enabled": True})
    assert "authservice.W013" not in ids(settings, [OURS])


def test_djangos_with_two_factor_off_is_fine(settings, configure):
    configure(two_factor={"enabled": False})
    assert "authservice.W013" not in ids(settings, [DJANGOS])


def test_the_warning_names_the_replacement(settings, configure):
    configure(two_factor={"enabled": True})
    settings.AUTHENTICATION_BACKENDS = [DJANGOS]
    [warning] = [problem for problem in check_settings(None) if problem.id == "authservice.W013"]
    assert OURS in warning.hint
