"""Attack 17b: guessing e-mailed codes of a user whose only second factor is e-mail.

The attacker holds the victim's password. docs/mfa.md promises that wrong codes lock the code check
per user ("ten in a row lock the code check for 15 minutes"), not only per pending sign-in; otherwise
the attacker starts a new sign-in after every 5 guesses and guesses without end. The lock is kept on
the TOTP row, which a user who turned on e-mail codes only does not have.
"""

import re

import pytest
from django.core import mail

from tests.conftest import PASSWORD, error_of
from tests.two_factor_support import start_sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def otp_only(signed_in):
    """``signed_in`` with e-mail codes as the only second factor (no TOTP row)."""
    response = signed_in.api_post("/two-factor/enable", {"password": PASSWORD, "method": "otp"})
    assert response.json() == {"method": "otp"}
    return signed_in


def _mailed_code():
    return re.search(r"\b(\d{6})\b", mail.outbox[-1].body).group(1)


def _guess_wrong_five_times(email):
    attacker = start_sign_in(email)
    assert attacker.api_post("/two-factor/send-otp").status_code == 200
    wrong = "000000" if _mailed_code() != "000000" else "111111"
    return [attacker.api_post("/two-factor/verify-otp", {"code": wrong}).status_code for _ in range(5)]


def test_ten_wrong_mailed_codes_across_sign_ins_lock_an_otp_only_user(otp_only):
    email = otp_only.user.email
    assert _guess_wrong_five_times(email) + _guess_wrong_five_times(email) == [401] * 10
    owner = start_sign_in(email)
    owner.api_post("/two-factor/send-otp")
    response = owner.api_post("/two-factor/verify-otp", {"code": _mailed_code()})
    assert response.status_code == 429
    assert error_of(response)["code"] == "ACCOUNT_TEMPORARILY_LOCKED"


def test_an_otp_only_user_gets_no_more_than_ten_guesses_across_sign_ins(otp_only):
    email = otp_only.user.email
    answers = []
    for _ in range(4):
        answers += _guess_wrong_five_times(email)
    assert answers.count(401) <= 10, answers
