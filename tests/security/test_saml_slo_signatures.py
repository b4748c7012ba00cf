"""SAML Single Logout: a logout message counts only when the provider's IdP signed it (I2, I9).

An attacker can post anything to ``/sso/saml2/sp/slo/{providerId}`` from any page, and holds their own
IdP key. A LogoutRequest that is unsigned, signed by another key, changed after signing, or carrying a
second copy of what was signed ends no session; the signature check is the ACS's (sso.saml.signature),
in both bindings.
"""

import pytest

from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    Message,
    acme,
    alive,
    configure_sso,
    get_slo,
    idp_entity,
    post_form,
    post_slo,
    redirect_query,
    refusal,
    saml_signed_in,
    slo_keys,
    slo_on,
    slo_url,
)


@pytest.fixture
def ada(acme, make_user):
    return saml_signed_in(make_user, acme, "ada@acme.com", "_session-ada")


def request(**changes):
    return Message(issuer=idp_entity("acme"), destination=slo_url("acme"), **changes)


def test_a_genuine_signed_post_logout_request_ends_the_session(ada, slo_keys, tmp_path):
    response = post_slo("acme", post_form(request(), slo_keys["idp"], tmp_path))
    assert response.status_code == 200, response.content  # the form carrying our LogoutResponse
    assert not alive(ada)


def test_a_genuine_signed_redirect_logout_request_ends_the_session(ada, slo_keys):
    response = get_slo("acme", redirect_query(request(), slo_keys["idp"], relay_state="r1"))
    assert response.status_code == 302, response.content
    assert not alive(ada)


def test_an_unsigned_post_logout_request_is_refused(ada):
    code, message = refusal(post_slo("acme", post_form(request())))
    assert code == "INVALID_LOGOUT_REQUEST"
    assert message == "Invalid LogoutRequest: the message is not signed"
    assert alive(ada)


def test_an_unsigned_redirect_logout_request_is_refused(ada):
    code, message = refusal(get_slo("acme", redirect_query(request())))
    assert (code, message) == ("INVALID_LOGOUT_REQUEST", "Invalid LogoutRequest: the message is not signed")
    assert alive(ada)


def test_a_post_logout_request_signed_by_another_key_is_refused(ada, slo_keys, tmp_path):
    code, message = refusal(post_slo("acme", post_form(request(), slo_keys["other"], tmp_path)))
    assert code == "INVALID_LOGOUT_REQUEST"
    assert "signature does not verify" in message
    assert alive(ada)


def test_a_redirect_logout_request_signed_by_another_key_is_refused(ada, slo_keys):
    code, message = refusal(get_slo("acme", redirect_query(request(), slo_keys["other"])))
    assert "signature does not verify" in message
    assert alive(ada)


def test_a_signed_post_logout_request_changed_after_signing_is_refused(ada, make_user, acme, slo_keys, tmp_path):
    bob = saml_signed_in(make_user, acme, "bob@acme.com", "_session-bob")
    import base64
    from urllib.parse import parse_qs, urlencode

    form = parse_qs(post_form(request(name_id="bob@acme.com", session_index="_session-bob"), slo_keys["idp"],
                              tmp_path))
    xml = base64.b64decode(form["SAMLRequest"][0]).decode().replace("bob@acme.com", "ada@acme.com")
    xml = xml.replace("_session-bob", "_session-ada")
    code, _ = refusal(post_slo("acme", urlencode({"SAMLRequest": base64.b64encode(xml.encode()).decode()})))
    assert code == "INVALID_LOGOUT_REQUEST"
    assert alive(ada) and alive(bob)


def test_a_redirect_signature_does_not_cover_another_relay_state(ada, slo_keys):
    query = redirect_query(request(), slo_keys["idp"], relay_state="genuine")
    code, message = refusal(get_slo("acme", query.replace("RelayState=genuine", "RelayState=forged")))
    assert "signature does not verify" in message
    assert alive(ada)


def test_a_redirect_signature_with_an_unknown_algorithm_is_refused(ada, slo_keys):
    query = redirect_query(request(), slo_keys["idp"], sig_alg="urn:made-up")
    code, _ = refusal(get_slo("acme", query))
    assert code == "INVALID_LOGOUT_REQUEST"
    assert alive(ada)


@pytest.mark.parametrize("extra", [
    # A second NameID after the signed one: which one would a reader take?
    "<saml:NameID>bob@acme.com</saml:NameID>",
    # A hidden signed copy: XSW's favourite hiding places.
    '<samlp:Extensions><samlp:LogoutRequest ID="_inner"/></samlp:Extensions>',
    '<ds:Object xmlns:ds="http://www.w3.org/2000/09/xmldsig#"/>',
    # A second Issuer.
    "<saml:Issuer>https://idp.example/evil</saml:Issuer>",
])
def test_a_signed_logout_request_with_a_second_copy_inside_is_refused(ada, slo_keys, tmp_path, extra):
    code, message = refusal(post_slo("acme", post_form(request(extra=extra), slo_keys["idp"], tmp_path)))
    assert code == "INVALID_LOGOUT_REQUEST"
    assert alive(ada)


def test_a_comment_inside_the_signed_name_id_is_refused(ada, slo_keys, tmp_path):
    # Exclusive c14n without comments signs "ada@acme.com" for "ada@acme<!---->.com"; no comment is read.
    message = request()
    message.name_id = "ada@acme.com"
    form = post_form(message, slo_keys["idp"], tmp_path)
    import base64
    from urllib.parse import parse_qs, urlencode

    xml = base64.b64decode(parse_qs(form)["SAMLRequest"][0]).decode().replace(
        "ada@acme.com</saml:NameID>", "ada@acme<!---->.com</saml:NameID>")
    code, _ = refusal(post_slo("acme", urlencode({"SAMLRequest": base64.b64encode(xml.encode()).decode()})))
    assert code == "INVALID_LOGOUT_REQUEST"
    assert alive(ada)


def test_unsigned_requests_pass_only_where_the_provider_opts_out(ada, acme):
    acme.saml_config = {**acme.saml_config, "wantLogoutRequestSigned": False}
    acme.save()
    response = post_slo("acme", post_form(request()))
    assert response.status_code == 200, response.content
    assert not alive(ada)


def test_a_deflate_bomb_is_refused_without_a_500(ada):
    import base64
    import zlib
    from urllib.parse import quote_plus

    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = base64.b64encode(compressor.compress(b"<" + b"A" * 50_000_000) + compressor.flush()).decode()
    code, message = refusal(get_slo("acme", f"SAMLRequest={quote_plus(bomb)}"))
    assert code == "INVALID_LOGOUT_REQUEST"
    assert "inflates past" in message
    assert alive(ada)
