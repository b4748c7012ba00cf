"""Attack 17d: a password sign-in in flight when the owner's reset lands undoes the reset (I1, I9).

The owner's password leaked; they reset it. The attacker signs in with the old one at that moment. The
account's stored hash is one Django upgrades on a successful check (any hash not made by the first of
PASSWORD_HASHERS: every imported better-auth ``salt:key`` hash until its first sign-in, every hash after
an operator changes the hasher or its cost). The sign-in reads the account, the reset commits, then the
sign-in compares the old password against the stale hash it read: it matches, and Django's setter saves
the re-hash of the OLD password over the reset's new one. The guard added in 17c (users.lock(user) must
return the hash that was checked, or "user.password: the re-hash, if any") then sees its own write and
lets the session through. The result: the reset is silently reverted, the attacker holds a session the
reset never revoked, and the owner's new password no longer works.

Secure behaviour: the upgrade is written only while the stored hash is still the one that was checked
(a conditional UPDATE ... WHERE password = checked, under the same user row lock), and the sign-in
refuses when it is not.
"""

import pytest
from django.contrib.auth.hashers import PBKDF2SHA1PasswordHasher

from tests.conftest import PASSWORD, ApiClient
from tests.security.reset_races import mailed_reset_token, reads_the_credential, reset_lands_after

pytestmark = pytest.mark.django_db
NEW_PASSWORD = "victim pass 99"


@pytest.fixture
def owner_with_an_upgradable_hash(make_user, settings):
    """A verified owner whose stored hash Django re-hashes on the next successful check."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher",
                                 "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher"]
    owner = make_user(email="victim@example.com", email_verified=True)
    owner.password = PBKDF2SHA1PasswordHasher().encode(PASSWORD, "importedsalt", iterations=1)
    owner.save(update_fields=["password"])
    return owner


@pytest.fixture
def reset_token(owner_with_an_upgradable_hash):
    return mailed_reset_token(owner_with_an_upgradable_hash.email)


def _the_owners_reset_lands_after_the_account_is_read(token):
    return reset_lands_after(token, NEW_PASSWORD, reads_the_credential)


def _attacker_signs_in_during_the_reset(owner, token):
    attacker = ApiClient()
    with _the_owners_reset_lands_after_the_account_is_read(token):
        attacker.api_post("/sign-in/email", {"email": owner.email, "password": PASSWORD})
    return attacker


def test_a_sign_in_with_the_old_password_racing_the_reset_opens_no_session(owner_with_an_upgradable_hash,
                                                                           reset_token):
    attacker = _attacker_signs_in_during_the_reset(owner_with_an_upgradable_hash, reset_token)

    assert attacker.api_get("/get-session").json() is None


def test_the_reset_password_still_works_after_a_racing_sign_in_with_the_old_one(owner_with_an_upgradable_hash,
                                                                               reset_token):
    owner = owner_with_an_upgradable_hash
    _attacker_signs_in_during_the_reset(owner, reset_token)

    assert ApiClient().api_post("/sign-in/email", {"email": owner.email,
                                                   "password": NEW_PASSWORD}).status_code == 200


def test_the_old_password_stays_dead_after_a_racing_sign_in(owner_with_an_upgradable_hash, reset_token):
    owner = owner_with_an_upgradable_hash
    _attacker_signs_in_during_the_reset(owner, reset_token)

    assert ApiClient().api_post("/sign-in/email", {"email": owner.email,
                                                   "password": PASSWORD}).status_code == 401
