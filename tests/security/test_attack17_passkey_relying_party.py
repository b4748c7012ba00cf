"""Attack 17, the relying party: an assertion or a credential made for another RP ID or another origin is
refused (I1). The attacker runs a look-alike site whose page gets the victim's authenticator to sign for it,
and relays that answer here; the expected RP ID and origins come from settings, never from the request's
Origin header (better-auth's default takes the header)."""

from tests.conftest import ApiClient, error_of
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, sign_in
from tests.security.passkey_fixtures import signed_in_client, victim  # noqa: F401 - fixtures

EVIL = "https://evil.example"


def test_an_assertion_for_another_rp_id_is_refused(victim):  # noqa: F811
    _, authenticator, _ = victim
    response = sign_in(ApiClient(), authenticator, rp_id="evil.example")
    assert response.status_code == 400 and error_of(response)["code"] == "AUTHENTICATION_FAILED"


def test_an_assertion_from_another_origin_is_refused(victim):  # noqa: F811
    _, authenticator, _ = victim
    response = sign_in(ApiClient(), authenticator, origin=EVIL)
    assert response.status_code == 400 and error_of(response)["code"] == "AUTHENTICATION_FAILED"


def test_the_request_origin_does_not_choose_the_expected_origin(victim, configure):  # noqa: F811
    """A trusted origin that sends the request is not thereby an origin the ceremony may come from."""
    _, authenticator, _ = victim
    configure(trusted_origins=["https://*.partner.example"], passkey={"origins": [ORIGIN]})
    browser = ApiClient(origin="https://app.partner.example")
    response = sign_in(browser, authenticator, origin="https://app.partner.example")
    assert response.status_code == 400 and error_of(response)["code"] == "AUTHENTICATION_FAILED"


def test_a_credential_made_for_another_rp_id_is_not_registered(make_user):
    client = signed_in_client(make_user())
    options = client.api_get("/passkey/generate-register-options").json()
    response = client.api_post("/passkey/verify-registration",
                               {"response": SoftAuthenticator(RP_ID, ORIGIN).create(options, rp_id="evil.example")})
    assert response.status_code == 400 and error_of(response)["code"] == "FAILED_TO_VERIFY_REGISTRATION"


def test_a_credential_made_on_another_origin_is_not_registered(make_user):
    client = signed_in_client(make_user())
    options = client.api_get("/passkey/generate-register-options").json()
    response = client.api_post("/passkey/verify-registration",
                               {"response": SoftAuthenticator(RP_ID, ORIGIN).create(options, origin=EVIL)})
    assert response.status_code == 400 and error_of(response)["code"] == "FAILED_TO_VERIFY_REGISTRATION"
