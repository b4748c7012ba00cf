"""SAML Single Logout, attack pass 14: the SLO record the ACS now writes breaks SAML sign-in (I4; the ACS
must not change behaviour because of SLO).

Since Single Logout, every SAML sign-in writes ``sso.models.SamlSession(provider, name_id[:1024], ...)``,
with a B-tree index on ``(provider, name_id)``. ``name_id[:1024]`` bounds *characters*, but PostgreSQL's
B-tree refuses an index row over 2704 bytes: 1000 characters outside the BMP (4 UTF-8 bytes each, not
compressible) are 4 KB. The INSERT fails after the user was signed in, the request answers
``503 SERVICE_UNAVAILABLE`` ("database unavailable: index row size 4048 exceeds btree version 4 maximum
2704") and the sign-in is lost; it fails this way whether or not Single Logout is enabled, because the
record is written unconditionally.

A NameID is the IdP's to choose (and with ``mapping.id`` the account key is another attribute, so nothing
else bounds the NameID); before SLO this sign-in worked. Run with PostgreSQL:
``DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db>``.

Fix at the mechanism: do not index (or compare) the raw NameID; store and look up a fixed-size digest of
``(provider, NameID)`` (e.g. SHA-256) and keep the NameID itself unindexed, or refuse NameIDs over a byte
bound at the ACS with a clean SAML error before any session is created. Never truncate: a truncated
NameID is a different identifier (two NameIDs sharing 1024 characters would be logged out together).
"""

import random

import pytest
from django.db import connection

from authservice.models import Session
from tests.security.test_subject_mapping_lock import _post_assertion, _provider, key  # noqa: F401 - fixture
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's B-tree row size bound"),
]


def _wide_name_id(length=1000):
    rnd = random.Random(14)
    return "".join(chr(rnd.randrange(0x20000, 0x2A6DF)) for _ in range(length))  # CJK Ext. B: 4 bytes each


@pytest.mark.parametrize("single_logout", [True, False])
def test_a_long_non_ascii_name_id_still_signs_in(make_user, key, tmp_path, configure_sso, single_logout):  # noqa: F811
    """The IdP signs a valid assertion whose NameID is 1000 supplementary-plane characters (the account
    is keyed by the ``uid`` attribute). The ACS must sign the user in as it did before SLO, not 503."""
    configure_sso(saml={"enable_single_logout": single_logout})
    owner = make_user(email="owner@acme.test", email_verified=True)
    _provider(owner, key, mapping={"id": "uid", "email": "email", "name": "cn"})
    response = _post_assertion(key, tmp_path, _wide_name_id(), {"uid": "eve", "email": "eve@acme.test", "cn": "Eve"})
    assert response.status_code == 302, (response.status_code, response.content)
    assert "error" not in response["Location"], response["Location"]
    assert Session.objects.filter(user__email="eve@acme.test").exists()
