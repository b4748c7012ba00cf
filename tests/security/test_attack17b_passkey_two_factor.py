"""Attack 17b, a passkey sign-in of a user with two-factor authentication on.

The user turned 2FA on: every sign-in is to take two factors. A passkey assertion whose authenticator
verified the user (the UV flag: a PIN or biometric on the device) is two factors in one, which is why
better-auth lets it through without the second step. One without UV is possession alone: a security
key found on a desk. With ``user_verification: "preferred"`` (the default) the service accepts it, and
it opens a session with no second factor at all, the one path left that does (mailed links were
closed: tests/security/test_attack17_two_factor_links.py).

Secure behaviour: a passkey assertion without UV for a user with 2FA answers like a password sign-in
of that user (``twoFactorRedirect``, no session) or is refused; with UV it signs in.
"""

import pytest

from authservice.models import Session
from tests.conftest import ApiClient
from tests.passkey_authenticator import ORIGIN, RP_ID, UV, SoftAuthenticator, register, sign_in
from tests.two_factor_support import enrol

pytestmark = pytest.mark.django_db


class PresenceOnlyKey(SoftAuthenticator):
    """A security key without a PIN or biometric: it asserts presence (UP), never verification (UV)."""

    def _flags(self, extra=0, backup_eligible=None):
        return super()._flags(extra, backup_eligible) & ~UV


@pytest.fixture
def two_factor_user_with_key(signed_in):
    enrol(signed_in)
    key = PresenceOnlyKey(RP_ID, ORIGIN)
    assert register(signed_in, key).status_code == 200
    return signed_in.user, key


def test_a_presence_only_passkey_opens_no_session_for_a_user_with_two_factor(two_factor_user_with_key):
    user, key = two_factor_user_with_key
    sessions_before = Session.objects.filter(user=user).count()
    finder = ApiClient()
    response = sign_in(finder, key)
    assert finder.api_get("/get-session").json() is None
    assert Session.objects.filter(user=user).count() == sessions_before
    assert response.status_code != 200 or response.json().get("twoFactorRedirect") is True


def test_a_user_verifying_passkey_signs_a_user_with_two_factor_in(signed_in):
    """The regression that bounds the fix: UV is a second factor, as in better-auth."""
    enrol(signed_in)
    authenticator = SoftAuthenticator(RP_ID, ORIGIN)
    assert register(signed_in, authenticator).status_code == 200
    browser = ApiClient()
    assert sign_in(browser, authenticator).status_code == 200
    assert browser.api_get("/get-session").json()["user"]["id"] == str(signed_in.user.pk)


def test_a_presence_only_passkey_signs_in_a_user_without_two_factor(signed_in):
    """Without 2FA the user asked for one factor; a presence-only key is that factor."""
    key = PresenceOnlyKey(RP_ID, ORIGIN)
    assert register(signed_in, key).status_code == 200
    assert sign_in(ApiClient(), key).status_code == 200
