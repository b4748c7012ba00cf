"""Attack 17, someone else's passkeys: a signed-in attacker who learnt a passkey id cannot delete or rename
it, nor see it listed (I1: the victim keeps its way in)."""

from authservice.models import Passkey
from tests.conftest import error_of
from tests.security.passkey_fixtures import attacker, victim  # noqa: F401 - fixtures


def test_deleting_another_users_passkey_is_refused(victim, attacker):  # noqa: F811
    _, _, passkey = victim
    response = attacker.api_post("/passkey/delete-passkey", {"id": passkey["id"]})
    assert response.status_code == 401 and error_of(response)["code"] == "UNAUTHORIZED"
    assert Passkey.objects.filter(pk=passkey["id"]).exists()


def test_renaming_another_users_passkey_is_refused(victim, attacker):  # noqa: F811
    _, _, passkey = victim
    response = attacker.api_post("/passkey/update-passkey", {"id": passkey["id"], "name": "pwned"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY"
    assert Passkey.objects.get(pk=passkey["id"]).name is None


def test_another_users_passkeys_are_not_listed(victim, attacker):  # noqa: F811
    assert attacker.api_get("/passkey/list-user-passkeys").json() == []
