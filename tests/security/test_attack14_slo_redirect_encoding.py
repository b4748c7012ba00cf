"""SAML Single Logout, attack pass 14: the HTTP-Redirect signature check reads the query in one form and
the endpoint uses another (I2, I4: "a check made on one form while another form is used").

``sso.saml.slo_inbound._octets`` picks the signed parts out of the raw query by their *raw* names
(``part.split("=")[0] == "RelayState"``), while the values the endpoint uses come from Django's
``request.GET``, which percent-decodes names. A parameter whose name is percent-encoded
(``Relay%53tate``) is therefore invisible to the signature check and fully visible to the endpoint.

Attack: take a genuine HTTP-Redirect LogoutRequest the IdP signed without a RelayState (the usual case:
a LogoutRequest to one SP of a multi-SP logout), append ``&Relay%53tate=https://evil.test/``. The query
signature still verifies (the octets are unchanged), the LogoutRequest is processed, and our *signed*
LogoutResponse carries the attacker's RelayState to the IdP, which sends the user there after logout:
an unsigned value rides inside our signature. (Appending a plain ``RelayState=`` is refused today:
test_saml_slo_signatures.test_a_redirect_signature_does_not_cover_another_relay_state.)

Fix at the mechanism: build the signed octets from the same parsed parameter list the endpoint uses
(decode every name once; refuse a query where a SAML binding parameter's name arrives percent-encoded
or appears twice after decoding), so "what is verified is what is used" holds for the query too.
"""

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    Message,
    acme,
    alive,
    configure_sso,
    get_slo,
    idp_entity,
    redirect_query,
    saml_signed_in,
    slo_keys,
    slo_on,
    slo_url,
)

EVIL = "https://evil.test/phish"


@pytest.fixture
def ada(acme, make_user):
    return saml_signed_in(make_user, acme, "ada@acme.com", "_session-ada")


def test_an_encoded_relay_state_name_does_not_slip_past_the_redirect_signature(ada, slo_keys):
    """I2: RelayState taken from the query although the signature does not cover it. Either the query is
    refused (400), or the smuggled RelayState is not echoed into our signed LogoutResponse."""
    genuine = redirect_query(Message(issuer=idp_entity("acme"), destination=slo_url("acme")), slo_keys["idp"])
    response = get_slo("acme", genuine + "&Relay%53tate=https%3A%2F%2Fevil.test%2Fphish")
    if response.status_code == 400:
        return
    assert response.status_code == 302, response.content
    echoed = parse_qs(urlsplit(response["Location"]).query).get("RelayState")
    assert echoed != [EVIL], f"our signed LogoutResponse carries the unsigned, smuggled RelayState {echoed!r}"


def test_a_binding_parameter_whose_name_arrives_percent_encoded_is_refused(ada, slo_keys):
    """The mechanism (sso.saml.slo_query): one reading of the query gives both the values used and the
    octets verified; a binding parameter name that needs decoding is refused outright."""
    genuine = redirect_query(Message(issuer=idp_entity("acme"), destination=slo_url("acme")), slo_keys["idp"])
    response = get_slo("acme", genuine + "&Relay%53tate=https%3A%2F%2Fevil.test%2Fphish")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "INVALID_LOGOUT_REQUEST"
    assert alive(ada)


def test_a_relay_state_repeated_after_the_signed_one_is_refused(ada, slo_keys):
    genuine = redirect_query(Message(issuer=idp_entity("acme"), destination=slo_url("acme")), slo_keys["idp"],
                             relay_state="/home")
    response = get_slo("acme", genuine + "&RelayState=https%3A%2F%2Fevil.test%2Fphish")
    assert response.status_code == 400, response.content
    assert alive(ada)
