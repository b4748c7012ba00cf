"""Attack 17b, ``require_email_verification`` and the passkey path (I1, one path per decision).

With ``email_and_password.require_email_verification`` on, an account whose address was never proven
gets no session: a password sign-in answers 403 ``EMAIL_NOT_VERIFIED``. A passkey sign-in of that same
account opens a session. An operator who turns the setting on to shut out accounts made on addresses
nobody proved (pre-hijacked ones among them) leaves every passkey registered on them working.
"""

import pytest

from tests.conftest import PASSWORD, ApiClient, error_of
from tests.passkey_authenticator import sign_in
from tests.security.passkey_fixtures import victim  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def test_a_password_sign_in_of_an_unverified_account_is_refused(victim, configure):  # noqa: F811
    """The rule the passkey path should share (held)."""
    client, _, _ = victim
    configure(email_and_password={"require_email_verification": True})
    response = ApiClient().api_post("/sign-in/email", {"email": client.user.email, "password": PASSWORD})
    assert response.status_code == 403 and error_of(response)["code"] == "EMAIL_NOT_VERIFIED"


def test_a_passkey_sign_in_of_an_unverified_account_is_refused_too(victim, configure):  # noqa: F811
    _, authenticator, _ = victim
    configure(email_and_password={"require_email_verification": True})
    browser = ApiClient()
    response = sign_in(browser, authenticator)
    assert response.status_code == 403, response.content
    assert browser.api_get("/get-session").json() is None
