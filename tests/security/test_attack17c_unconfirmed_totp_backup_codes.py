"""Attack 17c: backup codes of a TOTP enrolment that was never confirmed pass the second factor.

``/two-factor/enable`` stores a TOTP secret as *unverified* and hands out ten backup codes at once;
the first valid TOTP code confirms it. A pending sign-in refuses the unconfirmed TOTP itself
(``verify-totp``: ``TOTP_NOT_ENABLED``), but ``verify-backup-code`` only asks whether a TOTP row
exists, so the codes of an enrolment nobody finished already open sessions.

Where it bites: a user with e-mail codes only (``method: "otp"``). ``enable`` needs a session (any
age: guard ``session``, not ``fresh``) and the password. A thief with an old cookie and the password
calls it, never confirms anything, and holds ten codes that replace the victim's mailbox as the
second factor, while the victim's settings still say "e-mail codes" (``twoFactorMethods: ["otp"]``).

Invariant: I1 (the second factor is one the user confirmed). Secure behaviour: backup codes count
only with a confirmed (verified) TOTP factor, as better-auth gives them only with its TOTP; the sign-in
answer already says so, offering ``otp`` alone.
"""

import pytest

from tests.conftest import PASSWORD
from tests.two_factor_support import start_sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def otp_only(signed_in):
    """A user whose second factor is e-mail codes alone; ``signed_in`` stays their session."""
    assert signed_in.api_post("/two-factor/enable", {"password": PASSWORD, "method": "otp"}).status_code == 200
    return signed_in


def _unconfirmed_enrolment_codes(client):
    enabled = client.api_post("/two-factor/enable", {"password": PASSWORD})
    assert enabled.status_code == 200, enabled.content
    return enabled.json()["backupCodes"]


def test_the_sign_in_offers_e_mail_codes_alone_after_an_unconfirmed_totp_enrolment(otp_only):
    _unconfirmed_enrolment_codes(otp_only)
    answer = otp_only.__class__().api_post("/sign-in/email", {"email": otp_only.user.email, "password": PASSWORD})
    assert answer.json()["twoFactorMethods"] == ["otp"]


def test_a_backup_code_of_an_unconfirmed_totp_enrolment_does_not_finish_a_sign_in(otp_only):
    backup = _unconfirmed_enrolment_codes(otp_only)[0]
    client = start_sign_in(otp_only.user.email)
    response = client.api_post("/two-factor/verify-backup-code", {"code": backup})
    assert response.status_code == 400, "ten codes nobody confirmed replaced the mailbox as the second factor"
    assert response.json()["code"] == "BACKUP_CODES_NOT_ENABLED"
    assert client.api_get("/get-session").json() is None
