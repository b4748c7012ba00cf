"""Attack 17b: the password alone, through Django's own login, for a user who turned 2FA on.

The attacker holds a staff member's password (the very accounts 2FA matters most for). authservice's
sign-in asks them for a code; Django's admin login form (ModelBackend) asks for nothing more and opens
a Django session. authservice's middleware then takes that Django session as ``request.user`` on every
page of the project. One decision (may this user get a session on a password alone?) has a second
path that forgets the second factor (I1, "one path per decision").
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.conftest import PASSWORD, ApiClient
from tests.two_factor_support import enrol

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_with_two_factor(db):
    model = get_user_model()
    if not hasattr(model._default_manager, "create_superuser"):
        pytest.skip("a user model without staff users has no admin")
    staff = model._default_manager.create_superuser(
        **{model.USERNAME_FIELD: "root@example.com", "email": "root@example.com", "password": PASSWORD})
    api = ApiClient()
    assert api.api_post("/sign-in/email", {"email": "root@example.com", "password": PASSWORD}).status_code == 200
    enrol(api)
    return staff


def _django_login(staff):
    browser = Client()
    browser.post("/admin/login/?next=/admin/",
                 {"username": getattr(staff, get_user_model().USERNAME_FIELD), "password": PASSWORD})
    return browser


def test_the_admin_login_form_opens_no_admin_to_a_password_alone_when_2fa_is_on(staff_with_two_factor):
    browser = _django_login(staff_with_two_factor)
    assert browser.get("/admin/").status_code != 200


def test_a_password_alone_through_djangos_login_is_no_request_user_when_2fa_is_on(staff_with_two_factor):
    # /me/ is the example project's page that answers with request.user (authservice's middleware).
    browser = _django_login(staff_with_two_factor)
    assert browser.get("/me/").status_code != 200


def test_a_staff_member_without_a_second_factor_still_logs_in_through_the_admin_form(db):
    # The backend refuses only users with a second factor: Django's login form keeps working for others.
    model = get_user_model()
    if not hasattr(model._default_manager, "create_superuser"):
        pytest.skip("a user model without staff users has no admin")
    staff = model._default_manager.create_superuser(
        **{model.USERNAME_FIELD: "plain@example.com", "email": "plain@example.com", "password": PASSWORD})
    assert _django_login(staff).get("/admin/").status_code == 200


def test_a_staff_member_required_to_enrol_gets_no_admin_through_the_form_either(db, configure):
    configure(two_factor={"required_for": ["is_staff"]})
    model = get_user_model()
    if not hasattr(model._default_manager, "create_superuser"):
        pytest.skip("a user model without staff users has no admin")
    staff = model._default_manager.create_superuser(
        **{model.USERNAME_FIELD: "plain@example.com", "email": "plain@example.com", "password": PASSWORD})
    assert _django_login(staff).get("/admin/").status_code != 200
