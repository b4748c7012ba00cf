"""SAML Single Logout, attack pass 14: the SLO record truncates the NameID (I2: "what is verified is what
is used"; a logout must reach exactly the sessions its NameID names).

``sso.saml.slo.record`` (called by the ACS with the verified Assertion's NameID) stores
``name_id[:1024]``; ``end_sessions`` then compares the LogoutRequest's *full* NameID with the stored,
*truncated* one. For a NameID longer than 1024 characters (the IdP's to choose; nothing bounds it at the
ACS when ``mapping.id`` keys the account by an attribute):

- the IdP's LogoutRequest for that NameID matches nothing: the session outlives the IdP logout that
  should have ended it (an IT admin ending a departed user's IdP session leaves the app session alive);
- a NameID equal to the first 1024 characters of another names both: logging that user out at the IdP
  ends the other user's sessions too (the record no longer holds what was verified).

Fix at the mechanism: store what was verified, whole (or a digest of it, which also fixes the PostgreSQL
B-tree bound of test_attack14_slo_acs_record.py), or refuse an over-long NameID at the ACS before a
session exists. Never compare a prefix as if it were the identifier.
"""

import pytest

from sso.saml import slo
from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    Message,
    acme,
    alive,
    configure_sso,
    idp_entity,
    post_form,
    post_slo,
    saml_signed_in,
    slo_keys,
    slo_on,
    slo_url,
)

LONG = "ada-" + "x" * 1496 + "@acme.com"  # 1509 characters, ASCII (no index-size issue)


def _signed_in(make_user, acme, email, name_id, session_index):
    """A browser whose session the ACS recorded for ``name_id`` (through slo.record, as the ACS does)."""
    client = saml_signed_in(make_user, acme, email, session_index)
    client.session_row.sso_saml.delete()
    slo.record(client.session_row, acme, name_id, session_index)
    return client


def test_the_idp_logout_of_a_long_name_id_ends_its_session(acme, make_user, slo_keys, tmp_path):
    """The IdP names the NameID it asserted at sign-in; the session must end."""
    ada = _signed_in(make_user, acme, "ada@acme.com", LONG, "_s-ada")
    message = Message(issuer=idp_entity("acme"), destination=slo_url("acme"), name_id=LONG, session_index="_s-ada")
    response = post_slo("acme", post_form(message, slo_keys["idp"], tmp_path))
    assert response.status_code == 200, response.content
    assert not alive(ada), "the IdP's LogoutRequest for this user's NameID left the session alive"


def test_the_idp_logout_of_a_prefix_name_id_does_not_end_the_longer_ones_session(acme, make_user, slo_keys, tmp_path):
    """A LogoutRequest for NameID P (1024 characters) must not end the session of NameID P + "...": two
    different subjects of the IdP. Without a SessionIndex, every session of the named NameID ends."""
    long_user = _signed_in(make_user, acme, "lena@acme.com", LONG, "_s-lena")
    prefix_user = _signed_in(make_user, acme, "pat@acme.com", LONG[:1024], "_s-pat")
    message = Message(issuer=idp_entity("acme"), destination=slo_url("acme"), name_id=LONG[:1024],
                      session_index=None)
    response = post_slo("acme", post_form(message, slo_keys["idp"], tmp_path))
    assert response.status_code == 200, response.content
    assert not alive(prefix_user)
    assert alive(long_user), "logging out NameID P ended the session of another subject, NameID P + '...'"
