"""better-auth's scrypt password hashes are verified and upgraded (decisions D6, core.md §9).

The hashes come from better-auth itself: the checked-in fixture and the spec's test vector were made
by better-auth 1.7.5's ``hashPassword``, and one test asks the pinned package (tests/js) for a fresh
hash, so these tests prove compatibility with better-auth's code, not with our reading of it.
"""

import json
import subprocess
import unicodedata
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password, identify_hasher, make_password

from authservice.hashers import ALGORITHM, BetterAuthScryptPasswordHasher, normalize_imported

from .conftest import error_of
from tests.peers.node import node_or_skip

TESTS = Path(__file__).resolve().parent
JS = TESTS / "js"
FIXTURE = json.loads((TESTS / "fixtures" / "better_auth_hash.json").read_text())
SPEC_PASSWORD = "correct horse battery staple"
SPEC_HASH = (
    "3093cf50177af8408b7e005f751fb47a:4871a1ce04146ac23825323af026de7a881bba96ccd69ec0eeee230d154d6333e"
    "ad7d4931973fb08614d14d23024fbc6f17cf02e697cfaab9819bccb61abca0a"
)
ARGON2_FIRST = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "authservice.hashers.BetterAuthScryptPasswordHasher",
]


@pytest.fixture(autouse=True)
def _hashers_under_test(settings):
    # tests/conftest.py configures MD5 alone; these tests need ours too.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *ARGON2_FIRST]


def verifies(password, better_auth_hash):
    return BetterAuthScryptPasswordHasher().verify(password, normalize_imported(better_auth_hash))


def test_the_fixture_was_made_by_the_pinned_better_auth():
    package = json.loads((JS / "package.json").read_text())
    assert FIXTURE["betterAuthVersion"] == package["dependencies"]["better-auth"] == "1.7.5"


def test_a_hash_made_by_better_auth_verifies():
    assert verifies(FIXTURE["password"], FIXTURE["hash"])


def test_the_spec_test_vector_verifies():
    assert verifies(SPEC_PASSWORD, SPEC_HASH)


def test_a_wrong_password_does_not_verify():
    assert not verifies(SPEC_PASSWORD + " ", SPEC_HASH)
    assert not verifies(FIXTURE["password"].upper(), FIXTURE["hash"])
    assert not verifies("", SPEC_HASH)


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
def test_a_password_in_another_unicode_normal_form_verifies(form):
    # The fixture password is in none of the four forms; better-auth hashed its NFKC form.
    variant = unicodedata.normalize(form, FIXTURE["password"])
    assert variant != FIXTURE["password"]
    assert verifies(variant, FIXTURE["hash"])


def test_a_password_that_differs_after_normalisation_does_not_verify():
    # "ﬁ" folds to "fi" under NFKC, but "ﬂ" folds to "fl": normalising must not blur passwords.
    assert not verifies(FIXTURE["password"].replace("\ufb01", "\ufb02"), FIXTURE["hash"])


def test_django_identifies_an_imported_hash_and_check_password_accepts_it():
    encoded = normalize_imported(SPEC_HASH)
    assert encoded == "{}${}".format(ALGORITHM, SPEC_HASH.replace(":", "$"))
    assert identify_hasher(encoded).algorithm == ALGORITHM
    assert check_password(SPEC_PASSWORD, encoded)


def test_only_the_exact_better_auth_form_is_taken_for_an_imported_hash():
    for other in (SPEC_HASH.upper(), SPEC_HASH + "\n", SPEC_HASH[1:], "abc:def", "", None,
                  make_password("x")):
        assert normalize_imported(other) == other


def test_a_hash_our_hasher_makes_has_better_auths_shape_and_verifies():
    encoded = BetterAuthScryptPasswordHasher().encode(SPEC_PASSWORD, BetterAuthScryptPasswordHasher().salt())
    algorithm, salt, key = encoded.split("$")
    assert (algorithm, len(salt), len(key)) == (ALGORITHM, 32, 128)
    assert verifies(SPEC_PASSWORD, f"{salt}:{key}")


def test_a_lone_surrogate_is_hashed_as_javascript_encodes_it():
    # JSON may carry "\ud800"; JavaScript encodes it as U+FFFD, Python would refuse to encode it.
    hasher = BetterAuthScryptPasswordHasher()
    encoded = hasher.encode("pass\ufffdword", hasher.salt())
    assert hasher.verify("pass\ud800word", encoded)


@pytest.fixture
def imported_user(make_user):
    """A user whose password column holds a hash copied as-is from better-auth's account table."""
    user = make_user(email="imported@example.com", password=None)
    user.password = SPEC_HASH
    user.save(update_fields=["password"])
    return user


def test_an_imported_user_signs_in_over_http_and_is_rehashed_with_argon2(settings, api, imported_user):
    settings.PASSWORD_HASHERS = ARGON2_FIRST
    response = api.api_post("/sign-in/email", {"email": imported_user.email, "password": SPEC_PASSWORD})
    assert response.status_code == 200, response.content
    assert response.json()["user"]["id"] == str(imported_user.pk)
    imported_user.refresh_from_db()
    assert imported_user.password.startswith("argon2$")
    assert imported_user.check_password(SPEC_PASSWORD)


def test_an_upgraded_user_signs_in_again_with_the_same_password(settings, api, imported_user):
    settings.PASSWORD_HASHERS = ARGON2_FIRST
    for _ in range(2):
        response = api.api_post("/sign-in/email", {"email": imported_user.email, "password": SPEC_PASSWORD})
        assert response.status_code == 200, response.content


def test_an_imported_user_with_a_wrong_password_is_refused_and_keeps_the_hash(settings, api, imported_user):
    settings.PASSWORD_HASHERS = ARGON2_FIRST
    response = api.api_post("/sign-in/email", {"email": imported_user.email, "password": "not the password"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_EMAIL_OR_PASSWORD"
    imported_user.refresh_from_db()
    assert imported_user.password == SPEC_HASH


def test_an_imported_user_signs_in_with_a_differently_normalised_password(settings, api, make_user):
    settings.PASSWORD_HASHERS = ARGON2_FIRST
    user = make_user(email="unicode@example.com", password=None)
    get_user_model().objects.filter(pk=user.pk).update(password=FIXTURE["hash"])
    password = unicodedata.normalize("NFC", FIXTURE["password"])
    response = api.api_post("/sign-in/email", {"email": user.email, "password": password})
    assert response.status_code == 200, response.content
    user.refresh_from_db()
    assert user.password.startswith("argon2$")


def _node():
    return node_or_skip("better-auth")  # runs better-auth's own hashPassword


def test_a_fresh_hash_from_better_auths_own_helper_verifies():
    password = "fresh \u00e9t\u00e9 \u2126 " + "x" * 40
    completed = subprocess.run(
        [_node(), str(JS / "make_hash.mjs"), password],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    made = json.loads(completed.stdout)
    assert made["password"] == password
    assert made["hash"] not in (FIXTURE["hash"], SPEC_HASH)  # a new random salt
    assert verifies(password, made["hash"])
    assert not verifies(password + "!", made["hash"])
