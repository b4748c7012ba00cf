"""SAML Single Logout: an IdP speaks for its own provider's sessions only, and only those it names (I1, I2).

The attacker runs the IdP of their own provider ``evil`` (a verified domain of theirs). Their
messages, signed with their key, end nothing at ``acme``'s SLO service; at their own, they reach
only sessions ``evil`` opened, whatever NameID they name. At ``acme``, a genuine LogoutRequest for
one user ends that user's sessions (of that SessionIndex), nobody else's. A victim's browser made to
post a logout message keeps its own session unless that message named it (no logout CSRF).
"""

import pytest

from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    Message,
    acme,
    alive,
    configure_sso,
    evil,
    idp_entity,
    post_form,
    post_slo,
    refusal,
    saml_signed_in,
    slo_keys,
    slo_on,
    slo_url,
)


@pytest.fixture
def ada(acme, make_user):
    return saml_signed_in(make_user, acme, "ada@acme.com", "_session-ada")


def test_a_message_signed_by_another_providers_idp_is_refused(ada, evil, slo_keys, tmp_path):
    forged = Message(issuer=idp_entity("acme"), destination=slo_url("acme"))
    code, message = refusal(post_slo("acme", post_form(forged, slo_keys["other"], tmp_path)))
    assert "signature does not verify" in message
    assert alive(ada)


def test_a_genuine_message_of_another_provider_is_refused_at_this_one(ada, evil, slo_keys, tmp_path):
    theirs = Message(issuer=idp_entity("evil"), destination=slo_url("evil"))
    code, _ = refusal(post_slo("acme", post_form(theirs, slo_keys["other"], tmp_path)))
    assert code == "INVALID_LOGOUT_REQUEST"
    assert alive(ada)


def test_the_issuer_must_be_this_providers_idp(ada, slo_keys, tmp_path):
    # Signed by acme's key (rotation, a shared key), but naming another IdP.
    other_issuer = Message(issuer=idp_entity("evil"), destination=slo_url("acme"))
    code, message = refusal(post_slo("acme", post_form(other_issuer, slo_keys["idp"], tmp_path)))
    assert message.endswith("the message's Issuer is not this provider's IdP")
    assert alive(ada)


def test_the_destination_must_be_this_providers_slo_service(ada, evil, slo_keys, tmp_path):
    elsewhere = Message(issuer=idp_entity("acme"), destination=slo_url("evil"))
    code, message = refusal(post_slo("acme", post_form(elsewhere, slo_keys["idp"], tmp_path)))
    assert message.endswith("the message's Destination is not this provider's SLO URL")
    assert alive(ada)


def test_the_attackers_own_idp_cannot_name_a_victim_of_another_provider(ada, evil, slo_keys, tmp_path):
    theirs = Message(issuer=idp_entity("evil"), destination=slo_url("evil"), name_id="ada@acme.com",
                     session_index="_session-ada")
    assert post_slo("evil", post_form(theirs, slo_keys["other"], tmp_path)).status_code == 200
    assert alive(ada)  # the SamlSession is acme's: evil's IdP reaches only sessions evil opened


def test_a_name_id_of_another_user_ends_only_that_users_sessions(ada, acme, make_user, slo_keys, tmp_path):
    bob = saml_signed_in(make_user, acme, "bob@acme.com", "_session-bob")
    for_bob = Message(issuer=idp_entity("acme"), destination=slo_url("acme"), name_id="bob@acme.com",
                      session_index="_session-bob")
    assert post_slo("acme", post_form(for_bob, slo_keys["idp"], tmp_path)).status_code == 200
    assert not alive(bob)
    assert alive(ada)


def test_a_session_index_of_another_session_ends_nothing(ada, slo_keys, tmp_path):
    other_index = Message(issuer=idp_entity("acme"), destination=slo_url("acme"), session_index="_another")
    assert post_slo("acme", post_form(other_index, slo_keys["idp"], tmp_path)).status_code == 200
    assert alive(ada)


def test_without_a_session_index_every_session_of_the_name_id_ends(acme, make_user, slo_keys, tmp_path):
    first = saml_signed_in(make_user, acme, "ada@acme.com", "_one")
    from tests.conftest import PASSWORD, ApiClient
    from authservice.models import Session
    from sso.models import SamlSession

    second = ApiClient()
    second.api_post("/sign-in/email", {"email": "ada@acme.com", "password": PASSWORD})
    row = Session.objects.exclude(pk=first.session_row.pk).get(user__email="ada@acme.com")
    SamlSession.objects.create(session=row, provider=acme, name_id="ada@acme.com", session_index="_two")
    everything = Message(issuer=idp_entity("acme"), destination=slo_url("acme"), session_index=None)
    assert post_slo("acme", post_form(everything, slo_keys["idp"], tmp_path)).status_code == 200
    assert not Session.objects.filter(user__email="ada@acme.com").exists()


def test_a_victims_browser_posting_anothers_logout_keeps_its_session(ada, evil, make_user, slo_keys, tmp_path):
    mallory = saml_signed_in(make_user, evil, "m@evil.test", "_m")
    theirs = Message(issuer=idp_entity("evil"), destination=slo_url("evil"), name_id="m@evil.test",
                     session_index="_m")
    response = post_slo("evil", post_form(theirs, slo_keys["other"], tmp_path), client=ada)
    assert response.status_code == 200
    assert not alive(mallory)
    assert alive(ada)
    assert "auth.session_token" not in response.cookies  # the victim's cookie is left alone


def test_a_browser_whose_own_session_is_named_loses_its_cookie_too(ada, slo_keys, tmp_path):
    mine = Message(issuer=idp_entity("acme"), destination=slo_url("acme"))
    response = post_slo("acme", post_form(mine, slo_keys["idp"], tmp_path), client=ada)
    assert response.status_code == 200
    assert not alive(ada)
    assert response.cookies["auth.session_token"].value == ""


def test_a_signed_message_without_destination_is_refused(ada, slo_keys, tmp_path):
    # The IdP signs with one key for all its SPs: a LogoutRequest it sent another SP, naming no
    # Destination, must not end sessions here.
    message = Message(issuer=idp_entity("acme"), destination=slo_url("acme"))
    xml = message.xml().replace(f' Destination="{slo_url("acme")}"', "")
    from tests.security.saml_slo_support import sign_xml

    signed = sign_xml(xml, slo_keys["idp"], message.message_id, tmp_path)
    import base64
    from urllib.parse import urlencode

    code, text = refusal(post_slo("acme", urlencode({"SAMLRequest": base64.b64encode(signed.encode()).decode()})))
    assert text.endswith("the signed message has no Destination")
    assert alive(ada)


def test_the_attackers_idp_cannot_send_thousands_of_session_indexes(evil, make_user, slo_keys, tmp_path):
    many = "".join(f"<samlp:SessionIndex>_{n}</samlp:SessionIndex>" for n in range(500))
    message = Message(issuer=idp_entity("evil"), destination=slo_url("evil"), name_id="m@evil.test",
                      session_index="_first", extra="")
    xml = message.xml().replace("</samlp:SessionIndex>", "</samlp:SessionIndex>" + many, 1)
    from tests.security.saml_slo_support import sign_xml

    signed = sign_xml(xml, slo_keys["other"], message.message_id, tmp_path)
    import base64
    from urllib.parse import urlencode

    code, text = refusal(post_slo("evil", urlencode({"SAMLRequest": base64.b64encode(signed.encode()).decode()})))
    assert text.endswith("the message names more than 32 SessionIndexes")
