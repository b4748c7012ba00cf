"""I1 with a host user model whose e-mail is not unique (auth.User; W020 warns and promises that
"sign-in by e-mail picks the oldest of them").

The host project stores its users' addresses as typed. The victim (older row) is ``Victim@Example.com``;
the attacker registered through the host's own form, which checks no mailbox, as ``victim@example.com``.
``users.find_by_email`` prefers the exact lower-case match over the older case-variant, so every flow
that finds "the" account by address (sign-in, password reset, social/SSO linking) lands on the
attacker's row: the victim is locked out of password sign-in, and a reset link mailed to the victim
resets (and signs the victim into) the attacker's planted account (pre-hijack).

Run with ``--ds=tests.settings_auth_user``; skipped for models whose e-mail is unique.
Fix at the mechanism: among several users with one address (any case), find_by_email picks one
deterministic owner, the oldest (as W020 says), whatever the case of the stored address.
"""

import pytest
from django.contrib.auth import get_user_model

from authservice import users
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_the_oldest_owner_of_an_address_wins_whatever_its_case(db):
    model = get_user_model()
    field = model._meta.get_field(model.get_email_field_name())
    if field.unique or users.layout().own:
        pytest.skip("e-mail is unique in this user model")
    victim = model(**{model.USERNAME_FIELD: "victim", field.name: "Victim@Example.com"})
    victim.set_password(PASSWORD)
    victim.save()
    attacker = model(**{model.USERNAME_FIELD: "mallory", field.name: "victim@example.com"})
    attacker.set_password("attacker password 1")
    attacker.save()
    assert victim.pk < attacker.pk
    assert users.find_by_email("Victim@Example.com").pk == victim.pk
    assert users.find_by_email("victim@example.com").pk == victim.pk


def test_the_victim_still_signs_in_with_their_own_password(api, db):
    model = get_user_model()
    field = model._meta.get_field(model.get_email_field_name())
    if field.unique or users.layout().own:
        pytest.skip("e-mail is unique in this user model")
    victim = model(**{model.USERNAME_FIELD: "victim", field.name: "Victim@Example.com"})
    victim.set_password(PASSWORD)
    victim.save()
    attacker = model(**{model.USERNAME_FIELD: "mallory", field.name: "victim@example.com"})
    attacker.set_password("attacker password 1")
    attacker.save()
    response = api.api_post("/sign-in/email", {"email": "Victim@Example.com", "password": PASSWORD})
    assert response.status_code == 200, response.content
    assert response.json()["user"]["id"] == str(victim.pk)
