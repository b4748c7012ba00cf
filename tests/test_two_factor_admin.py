"""Resetting a locked-out user's factors: the admin action, ``manage.py mfa_reset``, and secret rotation."""

import logging

import pytest
from django.core.management import CommandError, call_command

from authservice import users
from authservice.models import TwoFactor
from authservice.two_factor import crypto
from tests.conftest import PASSWORD, ApiClient
from tests.two_factor_support import code, enrolled, start_sign_in  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def test_mfa_reset_turns_2fa_off_so_the_password_alone_signs_in(enrolled):
    call_command("mfa_reset", enrolled.user.email)
    answer = ApiClient().api_post("/sign-in/email", {"email": enrolled.user.email, "password": PASSWORD}).json()
    assert answer["token"]
    assert not TwoFactor.objects.filter(user=enrolled.user).exists()


def test_mfa_reset_deletes_the_users_passkeys_and_announces_each(enrolled):
    from authservice import signals
    from authservice.models import Passkey

    Passkey.objects.create(user=enrolled.user, public_key="pk", credential_id="cred-1", device_type="singleDevice")
    removed = []

    def receiver(sender, user, passkey, **kwargs):
        removed.append(passkey.credential_id)

    signals.passkey_removed.connect(receiver)
    try:
        call_command("mfa_reset", enrolled.user.email)
    finally:
        signals.passkey_removed.disconnect(receiver)
    assert not Passkey.objects.filter(user=enrolled.user).exists()
    assert removed == ["cred-1"]


def test_mfa_reset_is_logged_at_warning(enrolled, caplog):
    logger = logging.getLogger("authservice.mfa")
    logger.addHandler(caplog.handler)  # the project's LOGGING may not propagate "authservice"
    try:
        call_command("mfa_reset", enrolled.user.email)
    finally:
        logger.removeHandler(caplog.handler)
    assert any(r.name == "authservice.mfa" and r.levelno == logging.WARNING for r in caplog.records)


def test_mfa_reset_of_an_unknown_address_is_an_error(db):
    with pytest.raises(CommandError):
        call_command("mfa_reset", "nobody@example.com")


def test_the_admin_action_resets_two_factor(enrolled):
    from django.contrib.auth import get_user_model
    from django.test import Client

    model = get_user_model()
    if not hasattr(model._default_manager, "create_superuser"):
        pytest.skip("a user model without staff users has no admin")
    admin_client = Client()
    admin_client.force_login(model._default_manager.create_superuser(
        **{model.USERNAME_FIELD: "root@example.com", "email": "root@example.com", "password": "x" * 12}))
    if users.layout().own:
        url, ids = "/admin/authservice/user/", [enrolled.user.pk]
    else:
        url, ids = "/admin/authservice/authprofile/", [users.profile_of(enrolled.user).pk]
    response = admin_client.post(url, {"action": "reset_two_factor", "_selected_action": ids})
    assert response.status_code == 302
    assert users.two_factor_enabled_of(model.objects.get(pk=enrolled.user.pk)) is False


def test_secrets_encrypted_under_an_old_secret_still_work_and_reencrypt(enrolled, settings, configure):
    old = settings.SECRET_KEY
    configure(secret="a brand new deployment secret that is long", two_factor={"secret_fallbacks": [old]})
    assert start_sign_in(enrolled.user.email).api_post(
        "/two-factor/verify-totp", {"code": code(enrolled.secret, 1)}).status_code == 200
    call_command("two_factor_reencrypt")
    configure(two_factor={"secret_fallbacks": []})
    assert crypto.decrypt(TwoFactor.objects.get(user=enrolled.user).secret) == enrolled.secret
