"""I7: sign-in's time does not tell whether an address has an account, whatever hasher made its hash.

The review measured (wrong password, medians): argon2 user 118.8 ms, unknown address 120.3 ms, an
imported better-auth user (scrypt) 90.7 ms, a PBKDF2 user 249.4 ms: the unknown address burnt the
default hasher's work while a known user ran the stored hash's own hasher, so every imported account
showed until its owner signed in again. Now every attempt runs one verification with each configured
hasher (authservice.hashers.check_password_evenly). These tests count that work instead of timing it:
the hashers below are the real ones, configured through PASSWORD_HASHERS, that only record each
``verify`` they run.
"""

from collections import Counter
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import (
    Argon2PasswordHasher,
    PBKDF2PasswordHasher,
    make_password,
)
from django.core.management import call_command

from authservice.hashers import BetterAuthScryptPasswordHasher
from authservice.models import Account
from tests.conftest import PASSWORD, error_of

pytestmark = pytest.mark.django_db

RAN = Counter()
# better-auth 1.7.5's own hash of this password (tests/test_hashers.py), as copied from its database.
IMPORTED_PASSWORD = "correct horse battery staple"
IMPORTED_HASH = (
    "3093cf50177af8408b7e005f751fb47a:4871a1ce04146ac23825323af026de7a881bba96ccd69ec0eeee230d154d6333e"
    "ad7d4931973fb08614d14d23024fbc6f17cf02e697cfaab9819bccb61abca0a"
)


class CountingArgon2(Argon2PasswordHasher):
    time_cost, memory_cost, parallelism = 1, 64, 1  # cheap: only the count matters here

    def verify(self, password, encoded):
        RAN[self.algorithm] += 1
        return super().verify(password, encoded)


class CountingScrypt(BetterAuthScryptPasswordHasher):
    def verify(self, password, encoded):
        RAN[self.algorithm] += 1
        return super().verify(password, encoded)


class CountingPBKDF2(PBKDF2PasswordHasher):
    iterations = 1000

    def verify(self, password, encoded):
        RAN[self.algorithm] += 1
        return super().verify(password, encoded)


HASHERS = [f"{__name__}.{name}" for name in ("CountingArgon2", "CountingScrypt", "CountingPBKDF2")]
EACH_ONCE = {"argon2": 1, "better_auth_scrypt": 1, "pbkdf2_sha256": 1}


@pytest.fixture(autouse=True)
def counting_hashers(settings):
    settings.PASSWORD_HASHERS = HASHERS  # also forgets which hashers are in use
    RAN.clear()


def credential_user(email, password_column):
    user = get_user_model().objects.create(email=email, name="U", password=password_column)
    Account.objects.create(provider_id=Account.CREDENTIAL, account_id=user.pk, user=user)
    return user


@pytest.fixture
def users():
    return {
        "argon2": credential_user("argon2@example.com", make_password(PASSWORD, hasher="argon2")),
        "imported": credential_user("imported@example.com", IMPORTED_HASH),
        "pbkdf2": credential_user("pbkdf2@example.com", make_password(PASSWORD, hasher="pbkdf2_sha256")),
    }


def work_of_wrong_password(api, email):
    RAN.clear()
    response = api.api_post("/sign-in/email", {"email": email, "password": "wrong password 1"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_EMAIL_OR_PASSWORD"
    return dict(RAN)


def test_an_unknown_address_runs_each_configured_hasher_once(api, users):
    assert work_of_wrong_password(api, "nobody@example.com") == EACH_ONCE


def test_an_imported_better_auth_user_costs_what_an_unknown_address_costs(api, users):
    assert work_of_wrong_password(api, "imported@example.com") == \
        work_of_wrong_password(api, "nobody@example.com")


def test_an_argon2_user_costs_what_an_unknown_address_costs(api, users):
    assert work_of_wrong_password(api, "argon2@example.com") == \
        work_of_wrong_password(api, "nobody@example.com")


def test_a_pbkdf2_user_costs_what_an_unknown_address_costs(api, users):
    assert work_of_wrong_password(api, "pbkdf2@example.com") == \
        work_of_wrong_password(api, "nobody@example.com")


def test_a_user_without_a_password_costs_what_an_unknown_address_costs(api, users):
    get_user_model().objects.filter(email="argon2@example.com").update(password="!unusable")
    assert work_of_wrong_password(api, "argon2@example.com") == EACH_ONCE


def test_with_only_argon2_hashes_stored_every_attempt_costs_one_argon2(api, db):
    """The legacy hashers cost nothing while no stored hash uses them (the whole table decides, so it
    is the same for every address)."""
    credential_user("argon2@example.com", make_password(PASSWORD, hasher="argon2"))
    assert work_of_wrong_password(api, "argon2@example.com") == {"argon2": 1}
    assert work_of_wrong_password(api, "nobody@example.com") == {"argon2": 1}


def test_an_imported_user_signs_in_with_the_original_password_and_is_rehashed_to_argon2(api, users):
    response = api.api_post("/sign-in/email", {"email": "imported@example.com", "password": IMPORTED_PASSWORD})
    assert response.status_code == 200, response.content
    stored = get_user_model().objects.get(email="imported@example.com")
    assert stored.password.startswith("argon2$")
    assert stored.check_password(IMPORTED_PASSWORD)


def test_the_stored_hashers_command_names_a_configured_hasher_no_hash_uses(users):
    get_user_model().objects.filter(email="pbkdf2@example.com").delete()
    out = StringIO()
    call_command("authservice_stored_hashers", stdout=out)
    assert out.getvalue().splitlines() == [
        "argon2: 1", "better_auth_scrypt: 1",
        "pbkdf2_sha256: 0 (unused: drop it from PASSWORD_HASHERS to make every sign-in cheaper)"]


# --- weaker parameters than the hasher's current ones (second attack pass) ---------------------------
FULL_COST = Counter()


class CostAwareArgon2(Argon2PasswordHasher):
    time_cost, memory_cost, parallelism = 2, 128, 1

    def verify(self, password, encoded):
        FULL_COST["argon2 at current parameters"] += not self.must_update(encoded)
        return super().verify(password, encoded)


class CostAwarePBKDF2(PBKDF2PasswordHasher):
    iterations = 2000

    def harden_runtime(self, password, encoded):
        FULL_COST["pbkdf2 padded to current iterations"] += 1
        return super().harden_runtime(password, encoded)


def test_a_hash_with_weaker_parameters_still_pays_the_current_price(api, settings):
    settings.PASSWORD_HASHERS = [f"{__name__}.CostAwareArgon2", f"{__name__}.CostAwarePBKDF2"]
    weak_argon2 = Argon2PasswordHasher()
    weak_argon2.time_cost, weak_argon2.memory_cost = 1, 64
    credential_user("weak@example.com", weak_argon2.encode(PASSWORD, weak_argon2.salt()))
    weak_pbkdf2 = PBKDF2PasswordHasher()
    credential_user("old@example.com", weak_pbkdf2.encode(PASSWORD, weak_pbkdf2.salt(), iterations=500))
    for email in ("weak@example.com", "old@example.com", "nobody@example.com"):
        FULL_COST.clear()
        response = api.api_post("/sign-in/email", {"email": email, "password": "wrong password 1"})
        assert response.status_code == 401
        assert FULL_COST["argon2 at current parameters"] == 1, email
        assert FULL_COST["pbkdf2 padded to current iterations"] == (email == "old@example.com"), email
