"""A DELETE that lands while a PATCH of the same user is in flight is undone (attack 14, SCIM race).

``users._save`` (PUT/PATCH) finds the user with ``get()`` (``deleted=False``, no lock), then re-reads the
row ``select_for_update()`` *by primary key alone*, without ``deleted=False``. ``users.delete`` takes no
lock at all. When the DELETE commits between those two reads, the PATCH locks a row that is already
deleted and goes on: ``was_active`` is the deleted row's ``active`` (False), so ``_write_user`` treats
the user as one SCIM turned off itself and sets ``is_active`` back to true (the PATCH carries Okta's usual
``active: true``). The result: the resource is gone (GET 404), the IdP believes the person was
removed, yet the account is active and signs in again. I1 / the deactivation promise ("DELETE ends all
their sessions, and they cannot sign in until the IdP provisions them again") breaks on a race of the
IdP's own two requests.

The interleaving is reproduced in one thread: the test runs the DELETE right after the PATCH's
``get()`` returned, which is where a concurrent DELETE's commit can fall.

Fix at the mechanism: one locked read that carries the condition: ``select_for_update()`` with
``deleted=False`` (404 when the row was deleted meanwhile), and ``delete`` locking the row the same way.
"""

import pytest

from authservice import users as auth_users
from sso.scim import users as scim_users
from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def test_a_delete_committed_during_a_patch_is_not_undone(scim, monkeypatch):
    scim_id = scim.scim("POST", "/Users", user_body("leaver@acme.com")).json()["id"]
    real_get = scim_users.get
    raced = []

    def get_then_concurrent_delete(connection, pk):
        found = real_get(connection, pk)
        if not raced:
            raced.append(True)
            scim_users.delete(connection, pk)  # the IdP's DELETE commits here
        return found

    monkeypatch.setattr(scim_users, "get", get_then_concurrent_delete)
    scim.scim("PATCH", f"/Users/{scim_id}", patch_body(
        {"op": "replace", "value": {"displayName": "Leaver", "active": True}}))
    monkeypatch.setattr(scim_users, "get", real_get)

    assert scim.get_(f"/Users/{scim_id}").status_code == 404  # the IdP's view: the user is deleted
    user = auth_users.find_by_email("leaver@acme.com")
    assert not user.is_active, "a deleted SCIM user was re-activated by a PATCH that raced the DELETE"
