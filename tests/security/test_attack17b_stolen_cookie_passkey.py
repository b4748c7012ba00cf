"""Attack 17b, a stolen session cookie turned into a lasting credential.

The attacker holds a copy of the victim's session cookie (a shared computer, malware, a leaked log),
less than ``fresh_age`` old. ``generate-register-options`` and ``verify-registration`` ask for nothing
but that fresh session, so the thief adds a passkey on their own authenticator (which verifies *them*:
UV is set). When the victim notices and does what the service offers against a stolen session (change
the password and revoke the other sessions), the session dies, but the passkey does not: the thief
signs in again at will. For a user with 2FA the passkey also skips both the password and the second
factor, for good.

Secure behaviour: a credential cannot be added on the strength of a session cookie alone (re-prove
the password, or pass the second factor for a 2FA user, as ``/two-factor/enable`` asks for the
password), or the revocation that ends a stolen session also ends what was registered from it.
"""

import pytest

from tests.conftest import PASSWORD, ApiClient
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, register, sign_in
from tests.security.passkey_fixtures import signed_in_client
from tests.two_factor_support import enrol

pytestmark = pytest.mark.django_db


def _stolen(client):
    thief = ApiClient()
    thief.cookies = client.cookies.__class__()
    for name, morsel in client.cookies.items():
        thief.cookies[name] = morsel.value
    return thief


def _victim_revokes_everything_else(victim):
    response = victim.api_post("/change-password", {"currentPassword": PASSWORD, "newPassword": "brand new pass 1",
                                                    "revokeOtherSessions": True})
    assert response.status_code == 200, response.content


def test_a_passkey_added_with_a_stolen_cookie_dies_with_the_revocation_of_that_session(make_user):
    victim = signed_in_client(make_user(email="victim@example.com"))
    thief = _stolen(victim)
    key = SoftAuthenticator(RP_ID, ORIGIN)
    registered = register(thief, key)
    _victim_revokes_everything_else(victim)
    assert thief.api_get("/get-session").json() is None  # the stolen session itself did die
    assert registered.status_code != 200 or sign_in(ApiClient(), key).status_code in (400, 401)


def test_a_stolen_cookie_of_a_two_factor_user_does_not_become_a_password_and_2fa_free_credential(make_user):
    victim = signed_in_client(make_user(email="victim@example.com"))
    enrol(victim)  # 2FA on: the victim's sign-ins now take the password and a TOTP code
    thief = _stolen(victim)
    key = SoftAuthenticator(RP_ID, ORIGIN)
    registered = register(thief, key)
    _victim_revokes_everything_else(victim)
    later = ApiClient()
    assert registered.status_code != 200 or sign_in(later, key).status_code in (400, 401)
    assert later.api_get("/get-session").json() is None
