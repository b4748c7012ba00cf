"""SAML Single Logout, attack pass 14: the ACS and the SLO service read a SessionIndex differently (I2:
one value, one reader; "two parsers that pick different" values).

The ACS records ``AuthnStatement/@SessionIndex`` as is (``sso.saml.verified.Verified.session_index``:
``statement.get("SessionIndex")``); the SLO service reads ``samlp:SessionIndex`` with
``"".join(itertext()).strip()`` (``sso.saml.slo_inbound.Inbound.session_indexes``). SessionIndex is an
``xs:string``: surrounding whitespace is part of the value, and an IdP repeats in its LogoutRequest the
exact value it asserted. When that value has surrounding whitespace, the IdP's LogoutRequest names it
exactly and matches nothing: the session outlives the IdP logout. Conversely a LogoutRequest naming
``" s "`` reaches a session recorded as ``"s"``.

Fix at the mechanism: one function reads a SessionIndex (and a NameID) for both the ACS record and the
SLO lookup, with one normalisation (none, for xs:string), so the stored value is the value compared.
"""

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

ASSERTED = " _s-ada "  # AuthnStatement SessionIndex=" _s-ada " as the IdP asserted it


def test_the_idp_repeating_the_asserted_session_index_ends_that_session(acme, make_user, slo_keys, tmp_path):
    """The ACS stored " _s-ada " (the attribute as is); the IdP's LogoutRequest names " _s-ada " exactly;
    the SLO service strips it to "_s-ada" and ends nothing."""
    ada = saml_signed_in(make_user, acme, "ada@acme.com", "_unused")
    ada.session_row.sso_saml.delete()
    slo.record(ada.session_row, acme, "ada@acme.com", ASSERTED)  # what acs.py line 140 stores
    message = Message(issuer=idp_entity("acme"), destination=slo_url("acme"), session_index=ASSERTED)
    response = post_slo("acme", post_form(message, slo_keys["idp"], tmp_path))
    assert response.status_code == 200, response.content
    assert not alive(ada), "the IdP's LogoutRequest named the asserted SessionIndex; the session survived"
