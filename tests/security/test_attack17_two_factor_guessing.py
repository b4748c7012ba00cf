"""Attack 17: guessing and replaying second-factor codes with a stolen password."""

import pytest

from authservice.models import TwoFactorLockout
from tests.conftest import ApiClient, error_of
from tests.two_factor_support import code, enrolled, otp_enrolled, start_sign_in  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def _wrong(secret):
    current = {code(secret, step) for step in (-1, 0, 1)}
    return next(c for c in ("000000", "111111", "222222", "333333") if c not in current)


def test_a_totp_code_is_accepted_once(enrolled):
    used = code(enrolled.secret)
    first = start_sign_in(enrolled.user.email)
    assert first.api_post("/two-factor/verify-totp", {"code": used}).status_code == 200
    replay = start_sign_in(enrolled.user.email)
    response = replay.api_post("/two-factor/verify-totp", {"code": used})
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_CODE"


def test_an_older_code_of_the_window_is_refused_after_a_newer_one(enrolled):
    first = start_sign_in(enrolled.user.email)
    assert first.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret, 1)}).status_code == 200
    second = start_sign_in(enrolled.user.email)
    assert second.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret, 0)}).status_code == 401


def test_a_backup_code_is_accepted_once(enrolled):
    used = enrolled.backup_codes[0]
    assert start_sign_in(enrolled.user.email).api_post(
        "/two-factor/verify-backup-code", {"code": used}).status_code == 200
    response = start_sign_in(enrolled.user.email).api_post("/two-factor/verify-backup-code", {"code": used})
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_BACKUP_CODE"


def test_the_sixth_guess_of_one_sign_in_is_too_many_attempts_and_the_sign_in_dies(enrolled):
    attacker = start_sign_in(enrolled.user.email)
    wrong = _wrong(enrolled.secret)
    answers = [attacker.api_post("/two-factor/verify-totp", {"code": wrong}).status_code for _ in range(5)]
    sixth = attacker.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret)})
    assert answers == [401] * 5
    assert sixth.status_code == 400
    assert error_of(sixth)["code"] == "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE"
    after = attacker.api_post("/two-factor/verify-backup-code", {"code": enrolled.backup_codes[0]})
    assert error_of(after)["code"] == "INVALID_TWO_FACTOR_COOKIE"


def test_guesses_spread_over_methods_share_one_budget(enrolled):
    attacker = start_sign_in(enrolled.user.email)
    for _ in range(3):
        attacker.api_post("/two-factor/verify-totp", {"code": _wrong(enrolled.secret)})
    for _ in range(2):
        attacker.api_post("/two-factor/verify-backup-code", {"code": "aaaaa-bbbbb"})
    sixth = attacker.api_post("/two-factor/verify-backup-code", {"code": enrolled.backup_codes[0]})
    assert error_of(sixth)["code"] == "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE"


def test_ten_wrong_codes_across_sign_ins_lock_the_account(enrolled):
    wrong = _wrong(enrolled.secret)
    for _ in range(2):
        attacker = start_sign_in(enrolled.user.email)
        for _ in range(5):
            attacker.api_post("/two-factor/verify-totp", {"code": wrong})
    owner = start_sign_in(enrolled.user.email)
    response = owner.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret)})
    assert response.status_code == 429
    assert error_of(response)["code"] == "ACCOUNT_TEMPORARILY_LOCKED"


def test_the_lock_lifts_after_its_duration(enrolled):
    from datetime import timedelta

    from django.utils import timezone

    TwoFactorLockout.objects.update_or_create(user=enrolled.user, defaults={
        "failed_count": 10, "locked_until": timezone.now() - timedelta(seconds=1)})
    owner = start_sign_in(enrolled.user.email)
    assert owner.api_post("/two-factor/verify-totp", {"code": code(enrolled.secret)}).status_code == 200


def test_mailed_code_guesses_are_bounded_too(otp_enrolled):
    attacker = start_sign_in(otp_enrolled.user.email)
    attacker.api_post("/two-factor/send-otp")
    answers = [attacker.api_post("/two-factor/verify-otp", {"code": "12345x"}).status_code for _ in range(5)]
    sixth = attacker.api_post("/two-factor/verify-otp", {"code": "123456"})
    assert answers == [401] * 5
    assert error_of(sixth)["code"] == "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE"


def test_the_two_factor_paths_are_rate_limited_per_ip(enrolled, configure):
    configure(rate_limit={"enabled": True})
    attacker = ApiClient()
    answers = [attacker.api_post("/two-factor/verify-totp", {"code": "000000"}).status_code for _ in range(4)]
    assert answers == [401, 401, 401, 429]
