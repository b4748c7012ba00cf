"""A view-only admin user issues (or revokes) SCIM tokens (attack 14, SCIM admin).

``ScimConnectionAdmin`` offers the actions ``generate_token`` and ``revoke_token`` without
``allowed_permissions``. Django then offers an action to everyone who may open the change list, which
includes a staff user holding only ``sso.view_scimconnection`` (a help-desk or auditor role meant to
*look*). ``generate_token`` hands that user a live bearer token of any connection: a credential that
deactivates, deletes and signs out every provisioned person of the organization and decides their
roles, and it silently kills the IdP's token (provisioning stops). The SCIM API's own rule for issuing
a token is "the provider's owner or an owner/admin of its organization" (sso/endpoints/scim.py); the
admin path needs only "may view". I1/I10: a credential is issued to someone the rule does not allow.

Fix at the mechanism: both actions declare ``allowed_permissions = ("change",)`` (or a dedicated
``manage_scim_token`` permission), so a view-only user sees neither.
"""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(make_user):
    user = make_user(email="auditor@example.com", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_scimconnection", content_type__app_label="sso"))
    client = Client()
    client.force_login(user)
    assert client.get("/admin/sso/scimconnection/").status_code == 200  # may look: that is the role
    return client


def test_a_view_only_staff_user_cannot_generate_a_scim_token(viewer, scim):
    response = viewer.post("/admin/sso/scimconnection/", {"action": "generate_token",
                                                           "_selected_action": [scim.connection.pk]})
    page = response.content.decode(errors="replace")
    assert "<code>" not in page, "a view-only user was shown a new SCIM bearer token"
    assert scim.get_("/Users").status_code == 200, "a view-only user rotated the IdP's token away"


def test_a_view_only_staff_user_cannot_revoke_a_scim_token(viewer, scim):
    viewer.post("/admin/sso/scimconnection/", {"action": "revoke_token", "_selected_action": [scim.connection.pk]})
    assert scim.get_("/Users").status_code == 200, "a view-only user revoked the IdP's token"
