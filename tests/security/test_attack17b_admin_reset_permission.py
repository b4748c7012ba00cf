"""Attack 17b: an admin reset of second factors by a staff member who may only look at users.

The "Reset two-factor authentication" action carries no permission of its own, so Django offers it to
anyone who can open the user changelist, view permission included. A view-only staff account (a
support desk, an auditor) can then strip a superuser's TOTP, backup codes, trusted devices and passkeys,
leaving the superuser's password as the only thing between an attacker and the admin. A reset turns a
factor off, so it needs the change permission at least.
"""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from authservice import users
from tests.conftest import PASSWORD, ApiClient
from tests.two_factor_support import enrol

pytestmark = pytest.mark.django_db


@pytest.fixture
def own_user_model():
    model = get_user_model()
    if not users.layout().own or not hasattr(model._default_manager, "create_superuser"):
        pytest.skip("the user changelist with the action is authservice's own user model's")
    return model


@pytest.fixture
def superuser_with_two_factor(own_user_model):
    root = own_user_model._default_manager.create_superuser(email="root@example.com", password=PASSWORD)
    api = ApiClient()
    assert api.api_post("/sign-in/email", {"email": "root@example.com", "password": PASSWORD}).status_code == 200
    enrol(api)
    return root


@pytest.fixture
def view_only_staff(own_user_model):
    staff = own_user_model._default_manager.create_user(email="desk@example.com", password=PASSWORD,
                                                         is_staff=True)
    staff.user_permissions.add(Permission.objects.get(
        codename=f"view_{own_user_model._meta.model_name}", content_type__app_label=own_user_model._meta.app_label))
    browser = Client()
    browser.force_login(staff)
    return browser


def test_a_view_only_staff_member_cannot_reset_a_superusers_second_factor(superuser_with_two_factor,
                                                                           view_only_staff):
    model = type(superuser_with_two_factor)
    url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
    view_only_staff.post(url, {"action": "reset_two_factor", "_selected_action": [superuser_with_two_factor.pk]})
    assert users.two_factor_enabled_of(model.objects.get(pk=superuser_with_two_factor.pk)) is True


@pytest.fixture
def change_staff(own_user_model):
    """A staff member (not a superuser) who may change users."""
    staff = own_user_model._default_manager.create_user(email="ops@example.com", password=PASSWORD, is_staff=True)
    for action in ("view", "change"):
        staff.user_permissions.add(Permission.objects.get(
            codename=f"{action}_{own_user_model._meta.model_name}",
            content_type__app_label=own_user_model._meta.app_label))
    browser = Client()
    browser.force_login(staff)
    return browser


def _reset(browser, user):
    model = type(user)
    browser.post(f"/admin/{model._meta.app_label}/{model._meta.model_name}/",
                 {"action": "reset_two_factor", "_selected_action": [user.pk]})
    return users.two_factor_enabled_of(model.objects.get(pk=user.pk))


def test_a_staff_member_who_may_change_users_cannot_reset_a_superusers_second_factor(superuser_with_two_factor,
                                                                                     change_staff):
    assert _reset(change_staff, superuser_with_two_factor) is True


def test_a_staff_member_who_may_change_users_resets_an_ordinary_users_second_factor(own_user_model, change_staff):
    own_user_model._default_manager.create_user(email="user@example.com", password=PASSWORD)
    api = ApiClient()
    assert api.api_post("/sign-in/email", {"email": "user@example.com", "password": PASSWORD}).status_code == 200
    enrol(api)
    assert _reset(change_staff, own_user_model.objects.get(email="user@example.com")) is False
