"""SAML Single Logout: a LogoutResponse is taken only as the answer to a LogoutRequest we sent (I9).

Our LogoutRequest's ID is stored (``saml-logout-request:<ID>``, with the provider and the callbackURL)
when the user signs out; the IdP's LogoutResponse must name it in InResponseTo, for the same
provider, once, before it expires. Otherwise it is refused: an unsolicited, replayed or foreign
LogoutResponse is not a way to send a browser somewhere, nor to learn anything.
"""

import base64
import zlib
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from defusedxml import ElementTree

from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    Message,
    acme,
    alive,
    configure_sso,
    evil,
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
from tests.sso.saml.idp_signer import now

FAILED = "urn:oasis:names:tc:SAML:2.0:status:Responder"


def sign_out(client, provider_id="acme", callback="/signed-out"):
    """Start SP-initiated logout; returns the ID of the LogoutRequest we sent."""
    response = client.api_post(f"/sso/saml2/logout/{provider_id}", {"callbackURL": callback})
    assert response.status_code == 302, response.content
    saml_request = parse_qs(urlsplit(response["Location"]).query)["SAMLRequest"][0]
    return ElementTree.fromstring(zlib.decompress(base64.b64decode(saml_request), -15)).get("ID")


def answer(in_response_to, provider_id="acme", **changes):
    return Message(kind="LogoutResponse", issuer=idp_entity(provider_id), destination=slo_url(provider_id),
                   in_response_to=in_response_to, **changes)


@pytest.fixture
def ada(acme, make_user):
    return saml_signed_in(make_user, acme, "ada@acme.com", "_session-ada")


def test_the_answer_to_our_request_returns_to_the_callback(ada, slo_keys, tmp_path):
    request_id = sign_out(ada)
    assert not alive(ada)
    response = post_slo("acme", post_form(answer(request_id), slo_keys["idp"], tmp_path))
    assert response.status_code == 302, response.content
    assert response["Location"] == "/signed-out"


def test_a_logout_response_without_in_response_to_is_refused(ada, slo_keys, tmp_path):
    code, message = refusal(post_slo("acme", post_form(answer(None), slo_keys["idp"], tmp_path)))
    assert code == "INVALID_LOGOUT_RESPONSE"
    assert message == "Invalid LogoutResponse: it answers no LogoutRequest of ours (unsolicited)"


def test_a_logout_response_to_a_request_we_never_sent_is_refused(ada, slo_keys, tmp_path):
    code, message = refusal(post_slo("acme", post_form(answer("_never-sent"), slo_keys["idp"], tmp_path)))
    assert message.endswith("it answers no pending LogoutRequest of ours for this provider")


def test_a_logout_response_is_taken_once(ada, slo_keys):
    request_id = sign_out(ada)
    first = redirect_query(answer(request_id), slo_keys["idp"])
    assert get_slo("acme", first).status_code == 302
    # The same answer again, and a fresh one to the same request: both refused.
    code, message = refusal(get_slo("acme", first))
    assert message.endswith("the message was already used")
    code, message = refusal(get_slo("acme", redirect_query(answer(request_id), slo_keys["idp"])))
    assert message.endswith("it answers no pending LogoutRequest of ours for this provider")


def test_a_logout_response_to_another_providers_request_is_refused(ada, evil, make_user, slo_keys, tmp_path):
    mallory = saml_signed_in(make_user, evil, "m@evil.test", "_m")
    their_request = sign_out(mallory, "evil")
    # Acme's IdP signs an answer naming evil's request: not a request of acme's.
    code, message = refusal(post_slo("acme", post_form(answer(their_request), slo_keys["idp"], tmp_path)))
    assert message.endswith("it answers no pending LogoutRequest of ours for this provider")
    # And evil's own answer still works: the foreign attempt did not consume it.
    assert post_slo("evil", post_form(answer(their_request, "evil"), slo_keys["other"], tmp_path)).status_code == 302


def test_an_unsigned_logout_response_is_refused(ada):
    request_id = sign_out(ada)
    code, message = refusal(post_slo("acme", post_form(answer(request_id))))
    assert message == "Invalid LogoutResponse: the message is not signed"


def test_a_forged_logout_response_does_not_consume_our_request(ada, slo_keys, tmp_path):
    request_id = sign_out(ada)
    refusal(post_slo("acme", post_form(answer(request_id), slo_keys["other"], tmp_path)))
    assert post_slo("acme", post_form(answer(request_id), slo_keys["idp"], tmp_path)).status_code == 302


def test_a_logout_response_after_the_request_expired_is_refused(ada, slo_keys, tmp_path, configure_sso):
    request_id = sign_out(ada)
    from authservice.models import Verification

    Verification.objects.filter(identifier=f"saml-logout-request:{request_id}").update(
        expires_at=now() - timedelta(seconds=1))
    code, message = refusal(post_slo("acme", post_form(answer(request_id), slo_keys["idp"], tmp_path)))
    assert message.endswith("it answers no pending LogoutRequest of ours for this provider")


def test_a_failed_logout_at_the_idp_is_reported(ada, slo_keys, tmp_path):
    request_id = sign_out(ada)
    code, message = refusal(post_slo("acme", post_form(answer(request_id, status=FAILED), slo_keys["idp"],
                                                        tmp_path)))
    assert (code, message) == ("LOGOUT_FAILED_AT_IDP", "Logout failed at IdP")


def test_a_stored_callback_no_longer_trusted_gives_way_to_the_app_origin(ada, slo_keys, tmp_path, configure):
    configure(trusted_origins=["https://app.example"])
    request_id = sign_out(ada, callback="https://app.example/bye")
    configure(trusted_origins=[])  # the origin is dropped while the user is at the IdP
    response = post_slo("acme", post_form(answer(request_id), slo_keys["idp"], tmp_path))
    assert response.status_code == 302, response.content
    assert response["Location"] == "http://127.0.0.1:8000"


def test_delivering_a_logout_response_in_a_victims_browser_keeps_the_victims_session(
        ada, acme, make_user, slo_keys, tmp_path):
    attacker = saml_signed_in(make_user, acme, "mallory@acme.com", "_m")
    request_id = sign_out(attacker)
    response = post_slo("acme", post_form(answer(request_id), slo_keys["idp"], tmp_path), client=ada)
    assert response.status_code == 302
    assert "auth.session_token" not in response.cookies
    assert alive(ada)
