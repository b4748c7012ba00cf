"""A leaver cannot be deactivated once the provider's domain verification lapses (attack 14, SCIM).

Every PUT and PATCH re-derives the whole user (``users._save`` -> ``Derived``) and so re-runs
``_check_trusted`` on the user's *unchanged* address. When the provider's domain is no longer verified
(the periodic re-check failed: the TXT record was removed in a DNS migration, or the domain list was
edited), Okta's deactivation, ``PATCH {"op": "replace", "value": {"active": false}}``, answers 400 and
the leaver keeps their account and every session: docs/scim.md promises they are "signed out everywhere
within the minute their IdP pushes the change". Taking access *away* needs no trust in the directory's
addresses: a refusal there fails open. (I1: sessions of someone the authority revoked live on.)

Fix at the mechanism: the trust check guards what grants access (creating a user, adopting one,
changing an address or turning a user on), not a change that only removes it: ``active: false``
(and a PATCH that does not touch the address) must succeed whatever the domain's state.
"""

import pytest

from authservice import users
from authservice.models import Session
from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def test_deactivating_a_leaver_works_after_the_domain_verification_lapsed(scim):
    scim_id = scim.scim("POST", "/Users", user_body("leaver@acme.com")).json()["id"]
    leaver = users.find_by_email("leaver@acme.com")
    Session.objects.create(user=leaver, token="leaver-session", expires_at="2999-01-01T00:00:00Z")
    scim.provider.domain_verified = False  # the re-check failed
    scim.provider.save()

    response = scim.scim("PATCH", f"/Users/{scim_id}", patch_body({"op": "replace", "value": {"active": False}}))

    leaver.refresh_from_db()
    assert not leaver.is_active, f"the leaver is still active ({response.status_code} {response.content[:200]!r})"
    assert not Session.objects.filter(user=leaver).exists(), "the leaver's sessions survived the deactivation"
