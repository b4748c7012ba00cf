"""Attack 17 (policy): a staff user named by two_factor.required_for, with a password alone (a phished or
guessed one), tries to use the account before enrolling a second factor. Every endpoint outside the
enrolment allow-list answers 403 TWO_FACTOR_ENROLLMENT_REQUIRED; without the defence each succeeds."""

import pytest

from authservice import hashers
from authservice.models import Passkey
from tests.conftest import PASSWORD, error_of
from tests.peers.social import _stub_server, corp, stub  # noqa: F401 - fixtures
from tests.two_factor_support import pending, staff, staff_required  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def refused(response):
    return response.status_code == 403 and error_of(response)["code"] == "TWO_FACTOR_ENROLLMENT_REQUIRED"


def test_change_password_is_refused(pending):
    response = pending.api_post("/change-password", {"currentPassword": PASSWORD, "newPassword": "an0ther-secret!"})
    assert refused(response)
    assert hashers.check_password(type(pending.user).objects.get(pk=pending.user.pk), PASSWORD)


def test_update_user_is_refused(pending):
    assert refused(pending.api_post("/update-user", {"name": "Mallory"}))


def test_list_sessions_is_refused(pending):
    assert refused(pending.api_get("/list-sessions"))


def test_revoke_sessions_is_refused(pending):
    assert refused(pending.api_post("/revoke-sessions"))


def test_change_email_is_refused(pending):
    assert refused(pending.api_post("/change-email", {"newEmail": "mallory@example.com"}))


def test_passkey_registration_options_are_refused(pending):
    assert refused(pending.api_get("/passkey/generate-register-options"))


def test_passkey_registration_is_refused_and_no_passkey_is_stored(pending):
    response = pending.api_post("/passkey/verify-registration", {"response": {"id": "x", "rawId": "x"}})
    assert refused(response)
    assert not Passkey.objects.filter(user=pending.user).exists()


def test_link_social_is_refused(pending, corp):
    assert refused(pending.api_post("/link-social", {"provider": "corp", "callbackURL": "/dashboard"}))


def test_generate_backup_codes_is_refused(pending):
    assert refused(pending.api_post("/two-factor/generate-backup-codes", {"password": PASSWORD}))


def test_a_bearer_token_is_refused_the_same(pending, configure):
    from tests.conftest import ApiClient

    configure(bearer={"enabled": True})
    client = ApiClient(origin=None)
    token = pending.cookies["auth.session_token"].value
    assert refused(client.api_get("/list-sessions", HTTP_AUTHORIZATION=f"Bearer {token}"))
