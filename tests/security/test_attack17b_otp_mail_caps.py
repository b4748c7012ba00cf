"""Attack 17b: mail bombing through send-otp with the victim's password.

Each send-otp mails the victim a code. The per-IP rule (3 per 10 s per path) alone lets an attacker
with many IPs, or patience, mail the victim without end, one pending sign-in or many.
"""

import pytest
from django.core import mail

from tests.conftest import error_of
from tests.two_factor_support import otp_enrolled, start_sign_in  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def test_one_pending_sign_in_mails_at_most_three_codes(otp_enrolled):
    attacker = start_sign_in(otp_enrolled.user.email)
    sent_before = len(mail.outbox)
    answers = [attacker.api_post("/two-factor/send-otp") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert error_of(answers[-1])["code"] == "TOO_MANY_OTP_REQUESTS"
    assert answers[-1]["Retry-After"]
    assert len(mail.outbox) - sent_before == 3


def test_many_pending_sign_ins_mail_at_most_ten_codes_an_hour(otp_enrolled):
    sent_before = len(mail.outbox)
    answers = []
    for _ in range(6):
        attacker = start_sign_in(otp_enrolled.user.email)
        answers += [attacker.api_post("/two-factor/send-otp").status_code for _ in range(2)]
    assert answers.count(200) == 10
    assert len(mail.outbox) - sent_before == 10
