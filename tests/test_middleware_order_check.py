"""authservice.W012: AuthSessionMiddleware placed before Django's AuthenticationMiddleware.

Django's middleware sets ``request.user`` unconditionally, so placed after ours it replaces the user
our session cookie named; the check says so before a ``@login_required`` view mysteriously refuses.
"""

from authservice.checks import check_settings

OURS = "authservice.middleware.AuthSessionMiddleware"
DJANGOS = "django.contrib.auth.middleware.AuthenticationMiddleware"
SESSIONS = "django.contrib.sessions.middleware.SessionMiddleware"


def ids(settings, middleware):
    settings.MIDDLEWARE = middleware
    return {problem.id for problem in check_settings(None)}


def test_ours_before_djangos_is_warned_about(settings):
    assert "authservice.W012" in ids(settings, [SESSIONS, OURS, DJANGOS])


def test_ours_after_djangos_is_fine(settings):
    assert "authservice.W012" not in ids(settings, [SESSIONS, DJANGOS, OURS])


def test_ours_instead_of_djangos_is_fine(settings):
    assert "authservice.W012" not in ids(settings, [SESSIONS, OURS])


def test_djangos_alone_is_fine(settings):
    assert "authservice.W012" not in ids(settings, [SESSIONS, DJANGOS])


def test_the_warning_says_where_to_move_it(settings):
    settings.MIDDLEWARE = [OURS, DJANGOS]
    [warning] = [problem for problem in check_settings(None) if problem.id == "authservice.W012"]
    assert warning.hint == f"Move {OURS} after {DJANGOS}."
