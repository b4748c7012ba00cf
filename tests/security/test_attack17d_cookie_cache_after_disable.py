"""Attack 17d (cookie cache x enrolment): a staff user named by two_factor.required_for turns their second
factor off on this very device. From then on their session may only enrol again (get-session must flag
``twoFactorEnrollmentRequired``), yet the session_data cookie written while they were enrolled keeps
answering get-session as an ordinary session until it expires: the SPA (and host code reading the cached
answer) is told the session opens everything. cookie_cache.py claims a session still to enrol "is answered
the same from either source"; the answer that turns the factor off must expire the cache it carried."""

import pytest

from tests.conftest import PASSWORD
from tests.cookie_cache_support import cache_on, data_cookies  # noqa: F401 - fixture
from tests.two_factor_support import enrol, password_sign_in, staff, staff_required  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


@pytest.fixture
def enrolled_staff(cache_on, staff):
    """The staff user, enrolled (TOTP on) from a browser whose session is cached."""
    client = password_sign_in(staff.email)
    client.secret, client.backup_codes = enrol(client)
    client.user = staff
    ordinary = client.api_get("/get-session")
    assert ordinary.status_code == 200, ordinary.content
    assert "twoFactorEnrollmentRequired" not in ordinary.json()["session"]
    assert data_cookies(client), "precondition: this browser holds a cached session"
    return client


def test_get_session_flags_enrolment_after_the_user_turned_two_factor_off_on_this_device(enrolled_staff):
    disabled = enrolled_staff.api_post("/two-factor/disable", {"password": PASSWORD})
    assert disabled.status_code == 200, disabled.content

    answer = enrolled_staff.api_get("/get-session")

    assert answer.status_code == 200, answer.content
    assert answer.json()["session"].get("twoFactorEnrollmentRequired") is True, answer.json()


def test_the_disable_answer_expires_the_cached_session(enrolled_staff):
    disabled = enrolled_staff.api_post("/two-factor/disable", {"password": PASSWORD})
    assert disabled.status_code == 200, disabled.content

    assert not data_cookies(enrolled_staff), "the cache of a session now still to enrol outlived the disable"
