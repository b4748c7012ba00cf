"""SCIM answers 500 to a lone UTF-16 surrogate (attack 14, SCIM).

JSON lets a string carry ``"\\ud800"`` (a lone surrogate escape); ``json.loads`` turns it into a Python
``str`` that cannot be encoded to UTF-8. The SCIM view parses the body (sso/scim/views.py ``_body``) and
the filter (scim2-models unescapes ``\\uXXXX`` inside a filter's string literal), then hands the value to
the database driver, which raises ``UnicodeEncodeError``: the catch-all answers 500 and logs a traceback.
I4/I6: a parse error is a 400 (``invalidValue``/``invalidSyntax``/``invalidFilter``), never a 500. Any
connection's token (the attacker registers a provider for a domain of their own) reaches it.

Fix at the mechanism: refuse a lone surrogate where the input is decoded, once for every route: in
``_body`` (e.g. ``raw.decode()`` then ``json.loads`` and re-encode the parsed strings, or a
``object_pairs_hook``/walk that checks ``str.encode("utf-8")``) and in ``filters.parse`` for the
filter's literal values, answering 400.
"""

import pytest

from tests.sso.scim.conftest import (  # noqa: F401 - fixtures
    ScimClient, _scim_on, patch_body, provider, provider_factory, scim, scim_error, user_body,
)
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

LONE = "\ud800"


def test_a_lone_surrogate_in_a_user_body_is_a_400_not_a_500(scim):
    response = scim.scim("POST", "/Users", user_body("s@acme.com", displayName="x" + LONE))
    assert response.status_code == 400, (response.status_code, response.content)


def test_a_lone_surrogate_in_a_user_patch_is_a_400_not_a_500(scim):
    created = scim.scim("POST", "/Users", user_body("s@acme.com")).json()
    response = scim.scim("PATCH", f"/Users/{created['id']}",
                         patch_body({"op": "replace", "path": "displayName", "value": LONE}))
    assert response.status_code == 400, (response.status_code, response.content)


def test_a_lone_surrogate_as_a_group_member_id_is_a_400_not_a_500(scim):
    group = scim.scim("POST", "/Groups", {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                                          "displayName": "g"}).json()
    response = scim.scim("PATCH", f"/Groups/{group['id']}",
                         patch_body({"op": "add", "path": "members", "value": [{"value": LONE}]}))
    assert response.status_code == 400, (response.status_code, response.content)


def test_a_surrogate_escape_in_a_filter_literal_is_a_400_not_a_500(scim):
    # The query string is plain ASCII; the filter grammar itself unescapes \ud800 inside the literal.
    response = scim.get_("/Users", {"filter": 'userName eq "\\ud800"'})
    assert response.status_code == 400, (response.status_code, response.content)
    assert response.json().get("scimType") == "invalidFilter"
