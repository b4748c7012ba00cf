"""The passkey plugin's endpoints, driven by a software authenticator (tests/passkey_authenticator.py):
registration, sign-in, listing, renaming and deleting, with better-auth's bodies and answers."""

import pytest
from django.contrib.auth.signals import user_logged_in

from authservice import signals
from authservice.models import Passkey, Session
from tests.conftest import ApiClient, error_of
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, register, sign_in


@pytest.fixture
def authenticator():
    return SoftAuthenticator(RP_ID, ORIGIN)


@pytest.fixture
def registered(signed_in, authenticator):
    response = register(signed_in, authenticator, name="Laptop")
    assert response.status_code == 200, response.content
    return response.json()


def test_registration_options_name_the_relying_party_and_the_user(signed_in):
    options = signed_in.api_get("/passkey/generate-register-options").json()
    assert options["rp"] == {"id": RP_ID, "name": "authservice"}
    assert options["user"]["name"] == signed_in.user.email
    assert options["attestation"] == "none"
    assert options["authenticatorSelection"]["residentKey"] == "preferred"


def test_registration_options_set_the_challenge_cookie(signed_in):
    response = signed_in.api_get("/passkey/generate-register-options")
    cookie = response.cookies["auth.better-auth-passkey"]
    assert cookie["httponly"] and cookie["max-age"] == 300


def test_registration_needs_a_session(api):
    assert error_of(api.api_get("/passkey/generate-register-options"))["code"] == "UNAUTHORIZED"


def test_registration_stores_the_passkey_and_answers_it(registered, signed_in, authenticator):
    assert registered["name"] == "Laptop"
    assert registered["credentialID"] == authenticator.id
    assert registered["userId"] == str(signed_in.user.pk)
    assert registered["deviceType"] == "singleDevice" and registered["backedUp"] is False
    assert registered["transports"] == "internal"
    assert Passkey.objects.get(pk=registered["id"]).counter == 0


def test_registration_stores_the_backup_flags(signed_in):
    synced = SoftAuthenticator(RP_ID, ORIGIN, backup_eligible=True)
    body = register(signed_in, synced).json()
    assert body["deviceType"] == "multiDevice" and body["backedUp"] is True


def test_registration_excludes_the_users_existing_passkeys(registered, signed_in, authenticator):
    options = signed_in.api_get("/passkey/generate-register-options").json()
    assert [c["id"] for c in options["excludeCredentials"]] == [authenticator.id]


def test_registration_with_create_session_answers_a_session(signed_in, authenticator):
    body = register(signed_in, authenticator, createSession=True).json()
    assert body["session"]["userId"] == str(signed_in.user.pk) and body["user"]["email"] == signed_in.user.email


def test_registration_sends_passkey_added(signed_in, authenticator):
    seen = []
    signals.passkey_added.connect(lambda **kw: seen.append(kw), weak=False, dispatch_uid="t-added")
    try:
        register(signed_in, authenticator)
    finally:
        signals.passkey_added.disconnect(dispatch_uid="t-added")
    assert seen[0]["user"] == signed_in.user and seen[0]["passkey"].credential_id == authenticator.id


def test_sign_in_with_a_passkey_answers_session_and_user_and_sets_the_cookie(registered, authenticator, user):
    browser = ApiClient()
    response = sign_in(browser, authenticator)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["user"]["email"] == user.email
    assert Session.objects.filter(token=body["session"]["token"], user=user).exists()
    assert browser.api_get("/get-session").json()["user"]["id"] == str(user.pk)


def test_sign_in_stores_the_new_counter(registered, authenticator):
    sign_in(ApiClient(), authenticator)
    assert Passkey.objects.get(pk=registered["id"]).counter == authenticator.counter == 1


def test_sign_in_announces_the_login_and_sets_last_login(registered, authenticator, user):
    seen = []
    user_logged_in.connect(lambda **kw: seen.append(kw["user"]), weak=False, dispatch_uid="t-login")
    try:
        sign_in(ApiClient(), authenticator)
    finally:
        user_logged_in.disconnect(dispatch_uid="t-login")
    user.refresh_from_db()
    assert seen == [user] and user.last_login is not None


def test_sign_in_of_an_inactive_user_is_refused(registered, authenticator, user):
    type(user).objects.filter(pk=user.pk).update(is_active=False)
    response = sign_in(ApiClient(), authenticator)
    assert response.status_code == 401 and error_of(response)["code"] == "AUTHENTICATION_FAILED"


def test_sign_in_with_an_unknown_credential_is_passkey_not_found(db):
    response = sign_in(ApiClient(), SoftAuthenticator(RP_ID, ORIGIN))
    assert response.status_code == 401 and error_of(response)["code"] == "PASSKEY_NOT_FOUND"


def test_authentication_options_of_a_signed_in_user_allow_their_passkeys(registered, signed_in, authenticator):
    options = signed_in.api_get("/passkey/generate-authenticate-options").json()
    assert [c["id"] for c in options["allowCredentials"]] == [authenticator.id]
    assert options["rpId"] == RP_ID


def test_list_answers_the_callers_passkeys(registered, signed_in):
    listed = signed_in.api_get("/passkey/list-user-passkeys").json()
    assert listed == [registered]


def test_rename_answers_the_renamed_passkey(registered, signed_in):
    response = signed_in.api_post("/passkey/update-passkey", {"id": registered["id"], "name": "  Phone "})
    assert response.json()["passkey"]["name"] == "Phone"


def test_rename_to_blank_is_a_validation_error(registered, signed_in):
    response = signed_in.api_post("/passkey/update-passkey", {"id": registered["id"], "name": "  "})
    assert response.status_code == 400 and error_of(response)["code"] == "VALIDATION_ERROR"


def test_delete_removes_the_passkey_and_sends_passkey_removed(registered, signed_in):
    seen = []
    signals.passkey_removed.connect(lambda **kw: seen.append(kw), weak=False, dispatch_uid="t-removed")
    try:
        response = signed_in.api_post("/passkey/delete-passkey", {"id": registered["id"]})
    finally:
        signals.passkey_removed.disconnect(dispatch_uid="t-removed")
    assert response.json() == {"status": True}
    assert not Passkey.objects.exists()
    assert seen[0]["passkey"].id == registered["id"]


def test_delete_of_an_unknown_id_is_passkey_not_found(signed_in):
    response = signed_in.api_post("/passkey/delete-passkey", {"id": "nope"})
    assert response.status_code == 404 and error_of(response)["code"] == "PASSKEY_NOT_FOUND"


def test_a_deleted_passkey_no_longer_signs_in(registered, signed_in, authenticator):
    signed_in.api_post("/passkey/delete-passkey", {"id": registered["id"]})
    assert error_of(sign_in(ApiClient(), authenticator))["code"] == "PASSKEY_NOT_FOUND"


def test_the_endpoints_are_not_found_when_the_plugin_is_off(configure, api, db):
    configure(passkey={"enabled": False})
    assert error_of(api.api_get("/passkey/generate-authenticate-options"))["code"] == "NOT_FOUND"


def test_a_configured_rp_id_is_used(configure, signed_in):
    configure(passkey={"rp_id": "example.com"})
    assert signed_in.api_get("/passkey/generate-register-options").json()["rp"]["id"] == "example.com"


def test_a_registration_response_that_is_not_a_credential_is_refused(signed_in):
    signed_in.api_get("/passkey/generate-register-options")
    response = signed_in.api_post("/passkey/verify-registration", {"response": {"id": "x"}})
    assert response.status_code == 400 and error_of(response)["code"] == "FAILED_TO_VERIFY_REGISTRATION"


def test_an_assertion_that_is_not_a_credential_is_refused(registered, authenticator):
    browser = ApiClient()
    browser.api_get("/passkey/generate-authenticate-options")
    response = browser.api_post("/passkey/verify-authentication",
                                {"response": {"id": authenticator.id, "response": "junk"}})
    assert response.status_code == 400 and error_of(response)["code"] == "AUTHENTICATION_FAILED"
