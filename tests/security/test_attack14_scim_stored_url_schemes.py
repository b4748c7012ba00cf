"""SCIM stores and returns ``javascript:`` URLs in a User resource (attack 14, SCIM; I4, low severity).

I4: every URL we store or return is ``https`` (or ``http`` where allowed) and parses cleanly. A SCIM User
resource is kept "as the client sent it" (``ScimUser.resource``) and served back on every GET, so
``profileUrl`` and ``photos[].value`` (RFC 7643 reference/URI attributes) may be ``javascript:``/``data:``
URLs: scim2-models checks only that they look like URIs. Today only the IdP reads them back, but they
are stored on the auth origin and the first consumer that renders a photo or profile link (an admin
page, an avatar sync into ``user.image``, a directory UI) serves active content.

Fix at the mechanism: the URL attributes of a stored resource pass the same check as every other URL we
store (authservice's URL policy: https/http only, parsed cleanly), refused with 400 invalidValue.
"""

import pytest

from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def _no_active_url(response):
    assert response.status_code == 400 or "javascript:" not in response.content.decode(), response.content


def test_a_javascript_profile_url_is_not_stored(scim):
    _no_active_url(scim.scim("POST", "/Users", user_body("p@acme.com", profileUrl="javascript:alert(document.domain)")))


def test_a_javascript_photo_is_not_stored(scim):
    _no_active_url(scim.scim("POST", "/Users", user_body(
        "q@acme.com", photos=[{"value": "javascript:alert(document.domain)", "type": "photo"}])))
