"""Attack 17, the authenticator: a cloned authenticator (its signature counter does not move forward) or
another one posing as it (its backup eligibility differs from the registered one) signs in no one (I1);
a credential ID belongs to one account, so the attacker cannot register a victim's ID with its own key."""

from authservice.models import Passkey
from tests.conftest import ApiClient, error_of
from tests.passkey_authenticator import ORIGIN, RP_ID, SoftAuthenticator, register, sign_in
from tests.security.passkey_fixtures import attacker, victim  # noqa: F401 - fixtures


def test_a_signature_counter_going_backwards_is_refused(victim):  # noqa: F811
    _, authenticator, passkey = victim
    assert sign_in(ApiClient(), authenticator, counter=5).status_code == 200
    clone = sign_in(ApiClient(), authenticator, counter=3)
    assert clone.status_code == 400 and error_of(clone)["code"] == "AUTHENTICATION_FAILED"
    assert Passkey.objects.get(pk=passkey["id"]).counter == 5


def test_a_signature_counter_standing_still_is_refused(victim):  # noqa: F811
    _, authenticator, _ = victim
    assert sign_in(ApiClient(), authenticator, counter=5).status_code == 200
    clone = sign_in(ApiClient(), authenticator, counter=5)
    assert clone.status_code == 400 and error_of(clone)["code"] == "AUTHENTICATION_FAILED"


def test_a_single_device_credential_that_turns_backup_eligible_is_refused(victim):  # noqa: F811
    _, authenticator, _ = victim
    response = sign_in(ApiClient(), authenticator, backup_eligible=True)
    assert response.status_code == 400 and error_of(response)["code"] == "AUTHENTICATION_FAILED"


def test_another_account_cannot_register_a_victims_credential_id(victim, attacker):  # noqa: F811
    _, authenticator, _ = victim
    impostor = SoftAuthenticator(RP_ID, ORIGIN)
    impostor.credential_id = authenticator.credential_id  # listed to the victim; the key is the attacker's
    response = register(attacker, impostor)
    assert response.status_code == 400 and error_of(response)["code"] == "FAILED_TO_VERIFY_REGISTRATION"
    assert Passkey.objects.get(credential_id=authenticator.id).user.email == "victim@example.com"
