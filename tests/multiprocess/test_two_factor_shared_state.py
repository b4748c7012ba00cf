"""Two-factor state is shared by every server process: a TOTP code used on one is refused on the other."""


import time
from urllib.parse import parse_qs, urlsplit

import pyotp

from tests.multiprocess.conftest import PASSWORD


def test_a_totp_code_used_on_one_server_is_refused_on_the_other(pair):
    owner, email = pair.client(), pair.email()
    owner.sign_up(pair.a, email)
    uri = owner.api_post(pair.a, "/two-factor/enable", {"password": PASSWORD}).json()["totpURI"]
    totp = pyotp.TOTP(parse_qs(urlsplit(uri).query)["secret"][0])
    assert owner.api_post(pair.a, "/two-factor/verify-totp", {"code": totp.now()}).status_code == 200

    first, second = pair.client(), pair.client()
    assert first.sign_in(pair.a, email)["twoFactorRedirect"] is True
    assert second.sign_in(pair.b, email)["twoFactorRedirect"] is True
    # The code of the next step: the enrolment above used the current one.
    code = totp.at(int(time.time()) + 30)
    accepted = first.api_post(pair.a, "/two-factor/verify-totp", {"code": code})
    replayed = second.api_post(pair.b, "/two-factor/verify-totp", {"code": code})

    assert accepted.status_code == 200, accepted.text
    assert replayed.status_code == 401, replayed.text
    assert replayed.json()["code"] == "INVALID_CODE"
    assert second.session_of(pair.b) is None
