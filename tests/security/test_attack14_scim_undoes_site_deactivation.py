"""A SCIM directory re-activates a user the site deactivated (attack 14, SCIM active flag).

docs/scim.md and ``sso.scim.users._write_user`` promise: "the directory can always turn a user off, but
turns on only a user it turned off itself ... A user the site deactivated stays so". The check is
``was_active is False``, i.e. whether the *SCIM resource's* ``active`` was false, not whether *SCIM* is
the reason ``is_active`` is false. ``is_active`` is one bit shared by the site (an admin banning an
abusive account, a security lock) and the directory. So the directory (or whoever holds its token,
e.g. an attacker who registered the provider) unbans anyone it can reach in two requests: ``active:
false`` (a no-op on the already-inactive user, but it sets the resource's flag) then ``active: true``.
The same works for an adopted user the site had deactivated, by POSTing it with ``active: false``.
I1: an account the site locked gets sessions again without the site's decision.

Fix at the mechanism: record *who* deactivated the user (a separate flag, e.g. ``ScimUser.deactivated_user``
set only when SCIM itself flipped ``is_active`` from true to false), and re-activate only then.
"""

import pytest

from authservice import users
from authservice.models import Account
from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def _set_active(scim, scim_id, value):
    response = scim.scim("PATCH", f"/Users/{scim_id}", patch_body({"op": "replace", "path": "active", "value": value}))
    assert response.status_code == 200, response.content


def test_a_deactivate_then_reactivate_cycle_unbans_a_user_the_site_deactivated(scim):
    scim_id = scim.scim("POST", "/Users", user_body("abuser@acme.com")).json()["id"]
    user = users.find_by_email("abuser@acme.com")
    users.update(user, is_active=False)  # the site (an admin) bans the account; the directory still says active
    _set_active(scim, scim_id, False)
    _set_active(scim, scim_id, True)
    user.refresh_from_db()
    assert not user.is_active, "SCIM turned on a user it did not turn off"


def test_adopting_a_deactivated_user_inactive_then_activating_unbans_them(scim, make_user):
    banned = make_user(email="banned@acme.com", password=None)
    Account.objects.create(user=banned, provider_id=scim.provider.provider_id, account_id="sub-banned")
    users.update(banned, is_active=False)
    response = scim.scim("POST", "/Users", user_body("banned@acme.com", active=False))
    assert response.status_code == 201, response.content
    _set_active(scim, response.json()["id"], True)
    banned.refresh_from_db()
    assert not banned.is_active, "SCIM turned on a user the site deactivated before adopting them"
