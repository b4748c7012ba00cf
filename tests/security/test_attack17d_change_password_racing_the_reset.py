"""Attack 17d: a stolen session's change-password in flight when the owner's reset lands wins over it (I1).

The attacker holds the victim's session cookie and the old password. The victim notices and resets the
password by mail, which ends every session (revoke_sessions_on_password_reset). The attacker's
change-password read the session and the account before the reset committed; it then checks the OLD
current password against the stale hash it read (it matches) and stores the attacker's new password
over the reset's. The reset is silently reverted: the victim's new password no longer works, and the
attacker signs in again with a password of their choice (and can then enrol their own second factor).
17c ordered a password *sign-in* against the reset with the user row lock; change-password (and every
other "check the current password, then write" path: passwords.verify callers, Django's setter
upgrade of a hash) takes no lock and re-checks nothing.

Secure behaviour: the new password is stored only while the hash that was checked is still the stored
one (the user row lock, then a compare, or a conditional UPDATE ... WHERE password = checked), else
400 INVALID_PASSWORD.
"""

import pytest

from tests.conftest import PASSWORD, ApiClient
from tests.security.reset_races import mailed_reset_token, reads_the_credential, reset_lands_after

pytestmark = pytest.mark.django_db
OWNERS_NEW = "owner pass after the reset"
ATTACKERS = "attacker chose this one"


@pytest.fixture
def stolen(signed_in):
    """The victim's session cookie, in the attacker's hands (with the old password)."""
    return signed_in


@pytest.fixture
def reset_token(stolen):
    return mailed_reset_token(stolen.user.email)


def _the_owners_reset_lands_after_the_account_is_read(token):
    return reset_lands_after(token, OWNERS_NEW, reads_the_credential)


@pytest.fixture
def raced(stolen, reset_token):
    with _the_owners_reset_lands_after_the_account_is_read(reset_token):
        return stolen.api_post("/change-password", {"currentPassword": PASSWORD, "newPassword": ATTACKERS})


def test_the_owners_reset_password_still_works_after_a_racing_change_password(stolen, raced):
    assert ApiClient().api_post("/sign-in/email", {"email": stolen.user.email,
                                                   "password": OWNERS_NEW}).status_code == 200


def test_the_password_a_racing_stolen_session_chose_opens_nothing(stolen, raced):
    assert ApiClient().api_post("/sign-in/email", {"email": stolen.user.email,
                                                   "password": ATTACKERS}).status_code == 401


def test_a_change_password_racing_the_reset_is_refused(raced):
    assert raced.status_code in (400, 401), raced.content
