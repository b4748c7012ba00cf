"""Attack 13b: under ``auth.User`` the made-up user of a taken address shows the name as typed, a new
user shows it as stored.

``users.create`` splits the name into ``first_name``/``last_name`` at the first space, strips, and cuts
each part to 150 characters; ``to_wire`` then reads ``get_full_name()``. ``_fake_user``
(flows/email_password.py) echoes the submitted name verbatim. With verification required, sign-up with
``"  Ada  Lovelace  "`` answers ``"Ada Lovelace"`` for a free address and ``"  Ada  Lovelace  "`` for a
taken one; a 400-character name comes back cut to 150 (+ last part) only for a free address. One
request tells whether the address has an account (I7).

Fix at the mechanism: build the made-up user through the same mapping as a real one (an unsaved model
instance filled by ``users.create``'s assignment code, rendered by ``users.to_wire``), not a dict
written next to it, so every normalisation the model applies also applies to the made-up user.
"""

import pytest

from authservice import users
from tests.conftest import PASSWORD, ApiClient
from tests.subprocess_pytest import run_pytest

first_last = pytest.mark.skipif(users.layout().name != "first_last",
                                reason="run with --ds=tests.settings_auth_user (a first/last-name model)")

NAMES = ["  Ada  Lovelace  ", "x" * 400, "y" * 10 + " " + "z" * 300, "Ada\u3000Lovelace ", "Ada "]


@first_last
@pytest.mark.django_db
@pytest.mark.parametrize("name", NAMES)
def test_the_made_up_user_shows_the_name_a_new_user_would_get(configure, make_user, name):
    configure(email_and_password={"require_email_verification": True})
    make_user(email="victim@example.com")

    def answer(email):
        response = ApiClient().api_post("/sign-up/email", {"name": name, "email": email, "password": PASSWORD})
        assert response.status_code == 200, response.content
        return response.json()["user"]

    assert answer("victim@example.com")["name"] == answer("fresh@example.com")["name"]


def test_under_auth_user():
    if users.layout().name == "first_last":
        pytest.skip("this run is that one")
    result = run_pytest("tests.settings_auth_user", "tests/security/test_attack13b_made_up_user_name.py",
                        "-k", "made_up_user_shows")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
