"""Attack 17b: a password changed outside authservice still ends what the old password opened.

The owner learns the password leaked and changes it in Django's admin (or an operator runs
``changepassword``). The attacker, who trusted a browser or holds a pending sign-in made with the old
password, must not keep either. Every such change goes through ``set_password()`` + ``save()``.
"""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.management import call_command

from authservice.models import TrustedDevice, TwoFactorChallenge
from tests.conftest import PASSWORD
from tests.two_factor_support import code, enrolled, start_sign_in  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def trusted(enrolled):
    """``enrolled`` with a trusted device and an attacker's sign-in pending."""
    browser = start_sign_in(enrolled.user.email)
    assert browser.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret, 1),
                                                        "trustDevice": True}).status_code == 200
    start_sign_in(enrolled.user.email)
    assert TrustedDevice.objects.filter(user=enrolled.user).exists()
    assert TwoFactorChallenge.objects.filter(user=enrolled.user).exists()
    return enrolled


def _user(enrolled):
    return get_user_model()._default_manager.get(pk=enrolled.user.pk)


def test_set_password_and_save_forgets_trusted_devices_and_pending_sign_ins(trusted):
    user = _user(trusted)
    user.set_password("a-brand-new-password-1")
    user.save()
    assert not TrustedDevice.objects.filter(user=user).exists()
    assert not TwoFactorChallenge.objects.filter(user=user).exists()


def test_djangos_changepassword_command_forgets_trusted_devices(trusted, monkeypatch):
    user = _user(trusted)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": "a-brand-new-password-1")
    call_command("changepassword", user.get_username())
    assert not TrustedDevice.objects.filter(user=user).exists()


def test_saving_a_user_without_touching_the_password_forgets_nothing(trusted):
    user = _user(trusted)
    user.save()
    assert TrustedDevice.objects.filter(user=user).exists()


def test_a_hash_upgrade_at_login_is_no_password_change(trusted, settings):
    # Django re-hashes an old hash with the first hasher when the password checks: same password.
    settings.PASSWORD_HASHERS = [*settings.PASSWORD_HASHERS, "django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    model = get_user_model()
    model._default_manager.filter(pk=trusted.user.pk).update(
        password=make_password(PASSWORD, hasher="pbkdf2_sha256"))
    user = _user(trusted)
    assert user.check_password(PASSWORD)
    assert not _user(trusted).password.startswith("pbkdf2_sha256$")  # it was upgraded
    assert TrustedDevice.objects.filter(user=user).exists()
