"""Attack 17b, hostile bytes at the passkey ceremonies: a clear 4xx with the plugin's code, never a 5xx,
and nothing stored that WebAuthn forbids."""

import random

import pytest

from authservice.models import Passkey
from tests.conftest import ApiClient, error_of
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, b64url, register, unb64url
from tests.security.passkey_fixtures import attacker, victim  # noqa: F401 - fixtures


def test_a_credential_id_longer_than_webauthn_allows_is_refused_and_not_stored(attacker):  # noqa: F811
    """WebAuthn §7.1 step "credentialId ≤ 1023 bytes"; py_webauthn does not check it. The column holds
    1400 base64url characters (1050 bytes): past that PostgreSQL raises DataError (answered
    VALIDATION_ERROR, with a traceback in the log) while SQLite stores whatever came; in between
    (1024-1050 bytes) both store a credential no browser can make."""
    for size in (1024, 1100):
        authenticator = SoftAuthenticator(RP_ID, ORIGIN)
        authenticator.credential_id = bytes(size)
        response = register(attacker, authenticator)
        assert response.status_code == 400, (size, response.content[:200])
        assert error_of(response)["code"] == "FAILED_TO_VERIFY_REGISTRATION"
    assert not Passkey.objects.filter(user=attacker.user).exists()


@pytest.mark.parametrize("response", [
    {"id": 5}, {"id": ["x"]}, {"id": {"$ne": ""}}, {"id": ""}, {"id": "٣٣٣"}, {"id": "a" * 100_000},
    {"id": "\u202e\ufeff"}, {"id": "AAAA", "response": []}, {"id": "AAAA", "response": {"clientDataJSON": 7}},
])
def test_a_malformed_assertion_is_a_4xx(victim, response):  # noqa: F811
    browser = ApiClient()
    browser.api_get("/passkey/generate-authenticate-options")
    answer = browser.api_post("/passkey/verify-authentication", {"response": response})
    assert 400 <= answer.status_code < 500, answer.content[:200]
    assert browser.api_get("/get-session").json() is None


def _mutated(data, rnd):
    data = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        at = rnd.randrange(len(data) + 1)
        choice = rnd.randrange(3)
        if choice == 0 and data:
            data[min(at, len(data) - 1)] ^= 1 << rnd.randrange(8)
        elif choice == 1:
            del data[at:at + rnd.randint(1, 8)]
        else:
            data[at:at] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
    return bytes(data)


def test_mutated_signed_parts_of_an_assertion_never_sign_in_nor_fail_with_5xx(victim):  # noqa: F811
    """The signed parts (clientDataJSON, authenticatorData) and the signature: any change is a 4xx."""
    _, authenticator, _ = victim
    rnd = random.Random(17)
    for _ in range(150):
        browser = ApiClient()
        options = browser.api_get("/passkey/generate-authenticate-options").json()
        assertion = authenticator.get(options)
        part = rnd.choice(["clientDataJSON", "authenticatorData", "signature"])
        original = unb64url(assertion["response"][part])
        changed = _mutated(original, rnd)
        if changed == original:
            continue
        assertion["response"][part] = b64url(changed)
        answer = browser.api_post("/passkey/verify-authentication", {"response": assertion})
        assert 400 <= answer.status_code < 500, (part, answer.content[:200])


def test_mutated_registration_responses_never_fail_with_5xx(attacker):  # noqa: F811
    rnd = random.Random(17)
    for _ in range(150):
        options = attacker.api_get("/passkey/generate-register-options").json()
        created = SoftAuthenticator(RP_ID, ORIGIN).create(options)
        part = rnd.choice(["clientDataJSON", "attestationObject"])
        original = unb64url(created["response"][part])
        changed = _mutated(original, rnd)
        if changed == original:
            continue
        created["response"][part] = b64url(changed)
        answer = attacker.api_post("/passkey/verify-registration", {"response": created})
        assert answer.status_code < 500, (part, answer.content[:200])
