"""SAML Single Logout, attack pass 14: attacks that the SLO code withstands today (regression guards).

Each test names the invariant of security.md it guards and the attack it tried. The holes found in the
same pass are in tests/security/test_attack14_slo_*.py (not ``_held``).
"""

import base64
import time
import zlib
from urllib.parse import quote_plus, urlencode

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

from authservice.models import Session, Verification
from sso.saml import store
from tests.conftest import BASE, ApiClient
from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    FORM,
    Message,
    acme,
    alive,
    configure_sso,
    deflate,
    evil,
    get_slo,
    idp_entity,
    post_form,
    post_slo,
    redirect_query,
    refusal,
    saml_signed_in,
    sign_xml,
    slo_keys,
    slo_on,
    slo_url,
)

RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"


@pytest.fixture
def ada(acme, make_user):
    return saml_signed_in(make_user, acme, "ada@acme.com", "_session-ada")


def request(provider_id="acme", **changes):
    return Message(issuer=idp_entity(provider_id), destination=slo_url(provider_id), **changes)


# --- HTTP-Redirect: the signed octets and the parameters used ---------------------------------------
def test_a_second_saml_request_under_an_encoded_name_is_refused(ada, make_user, acme, slo_keys):
    """I2: the signature covers ``SAMLRequest=<bob's>``; ``SAML%52equest=<ada's>`` is the same parameter
    once decoded. The query must be refused, not read as either copy."""
    bob = saml_signed_in(make_user, acme, "bob@acme.com", "_session-bob")
    genuine = redirect_query(request(name_id="bob@acme.com", session_index="_session-bob"), slo_keys["idp"])
    forged = deflate(request().xml())
    response = get_slo("acme", f"{genuine}&SAML%52equest={quote_plus(forged)}")
    assert response.status_code == 400, response.content
    assert alive(ada) and alive(bob)


def test_a_second_sig_alg_under_an_encoded_name_is_refused(ada, slo_keys):
    """I2: two SigAlg values (one raw, one percent-encoded name) never let the weaker one be checked."""
    genuine = redirect_query(request(), slo_keys["idp"])
    response = get_slo("acme", f"{genuine}&Sig%41lg={quote_plus(RSA_SHA1)}")
    assert response.status_code == 400, response.content
    assert alive(ada)


def _sha1_query(message, keypair):
    query = f"SAMLRequest={quote_plus(deflate(message.xml()))}&SigAlg={quote_plus(RSA_SHA1)}"
    key = serialization.load_pem_private_key(keypair.key_path.read_bytes(), None)
    value = key.sign(query.encode(), padding.PKCS1v15(), hashes.SHA1())  # noqa: S303 - the downgrade tried
    return query + "&Signature=" + quote_plus(base64.b64encode(value).decode())


def test_a_genuine_rsa_sha1_redirect_signature_is_refused_when_the_policy_rejects_it(ada, slo_keys, configure_sso):
    """SigAlg downgrade: the IdP's own key, but RSA-SHA1, where saml.algorithms.on_deprecated is "reject"
    (the default "warn" accepts it, for the ACS as for SLO: one policy). The query's SigAlg is put
    through the same policy as the XML's SignatureMethod."""
    configure_sso(saml={"algorithms": {"on_deprecated": "reject"}})
    code, _ = refusal(get_slo("acme", _sha1_query(request(), slo_keys["idp"])))
    assert code == "INVALID_LOGOUT_REQUEST"
    assert alive(ada)


def test_a_bad_signature_is_refused_even_where_unsigned_messages_are_allowed(ada, acme, slo_keys):
    """wantLogoutRequestSigned=false abuse: a present signature must still verify (no "ignore bad")."""
    acme.saml_config = {**acme.saml_config, "wantLogoutRequestSigned": False}
    acme.save()
    code, message = refusal(get_slo("acme", redirect_query(request(), slo_keys["other"])))
    assert "signature does not verify" in message
    assert alive(ada)


# --- confusion between the message kinds and the ACS --------------------------------------------------
def test_a_logout_response_answering_an_authn_request_is_refused_and_leaves_it(ada, acme, slo_keys, tmp_path):
    """I9: a LogoutResponse naming one of our AuthnRequest IDs neither passes nor consumes it."""
    store.remember_request(acme, "_authn-ada")
    answer = Message(kind="LogoutResponse", issuer=idp_entity("acme"), destination=slo_url("acme"),
                     in_response_to="_authn-ada")
    code, _ = refusal(post_slo("acme", post_form(answer, slo_keys["idp"], tmp_path)))
    assert code == "INVALID_LOGOUT_RESPONSE"
    assert Verification.objects.filter(identifier=store.REQUEST_PREFIX + "_authn-ada").exists()


def test_a_signed_logout_request_posted_to_the_acs_signs_nobody_in(ada, acme, slo_keys, tmp_path):
    """I1/I2: the IdP's genuine signed LogoutRequest, posted to the ACS as a SAMLResponse, is no Response."""
    message = request(message_id="_lr-acs")
    signed = sign_xml(message.xml(), slo_keys["idp"], message.message_id, tmp_path)
    browser = ApiClient(origin=None)
    before = Session.objects.count()
    response = browser.post(f"{BASE}/sso/saml2/callback/acme",
                            urlencode({"SAMLResponse": base64.b64encode(signed.encode()).decode()}),
                            content_type=FORM)
    assert response.status_code in (302, 400), response.content
    if response.status_code == 302:
        assert "error" in response["Location"], response["Location"]
    assert Session.objects.count() == before
    assert alive(ada)


# --- answers -------------------------------------------------------------------------------------------
def test_the_post_binding_answer_escapes_the_relay_state_and_allows_only_its_own_script(ada, acme, slo_keys,
                                                                                           tmp_path):
    """I3: the auto-post page carries the IdP's RelayState; it is escaped, nosniff, and the CSP allows
    only the page's own script (no 'unsafe-inline')."""
    acme.saml_config = {**acme.saml_config, "idpMetadata": {**acme.saml_config["idpMetadata"], "singleLogoutService": [
        {"Binding": "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST", "Location": "https://idp.example/acme/slo"}]}}
    acme.save()
    hostile = '"><script>alert(document.domain)</script>'
    response = post_slo("acme", post_form(request(), slo_keys["idp"], tmp_path, relay_state=hostile))
    assert response.status_code == 200, response.content
    page = response.content.decode()
    assert "<script>alert(" not in page
    assert response["X-Content-Type-Options"] == "nosniff"
    policy = response["Content-Security-Policy"]
    assert "unsafe-inline" not in policy and "default-src 'none'" in policy


# --- cost and clean errors -------------------------------------------------------------------------------
def test_a_deflated_document_that_is_not_a_logout_message_is_refused_cheaply(acme):
    """I6: 250,000 elements under a bogus root are refused at the root's name (parse cost only)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    encoded = base64.b64encode(compressor.compress(("<x>" + "<a/>" * 250_000 + "</x>").encode())
                               + compressor.flush()).decode()
    query = f"SAMLRequest={quote_plus(encoded)}"
    client = ApiClient(origin=None)
    get_slo("acme", query, client)
    start = time.process_time()
    response = get_slo("acme", query, client)
    assert response.status_code == 400, response.content
    assert time.process_time() - start < 0.1


def test_a_provider_id_with_a_nul_byte_is_a_clean_400(slo_on, db):
    """I4: a NUL in the path parameter (PostgreSQL refuses it in text) is a 400, never a 500."""
    for response in (get_slo("x%00y", "SAMLRequest=AAAA"), post_slo("x%00y", "SAMLRequest=AAAA")):
        assert response.status_code in (400, 404), response.content


@pytest.mark.parametrize("instant", ["0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59",
                                     "2026-13-40T99:99:99Z", "not a date"])
def test_an_absurd_issue_instant_is_a_clean_400(evil, slo_keys, tmp_path, instant):
    """I4/I6: IssueInstant at the edges of the datetime range, or not a date, from the attacker's own IdP."""
    message = request("evil", name_id="mallory@evil.test")
    text = message.xml()
    head, _, rest = text.partition('IssueInstant="')
    text = f'{head}IssueInstant="{instant}"{rest.partition(chr(34))[2]}'
    signed = sign_xml(text, slo_keys["other"], message.message_id, tmp_path)
    response = post_slo("evil", urlencode({"SAMLRequest": base64.b64encode(signed.encode()).decode()}))
    assert response.status_code == 400, response.content


# --- SP-initiated ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("callback", ["//evil.test/x", "/\\evil.test/x", "https:evil.test", "https://evil.test@127.0.0.1.evil.test/",
                                      "javascript:alert(1)", "https://evil.test/"])
def test_sp_initiated_logout_refuses_an_untrusted_callback_and_keeps_the_session(ada, callback):
    """I4: callbackURL variants that browsers read as another origin are refused; the session stays."""
    response = ada.api_post("/sso/saml2/logout/acme", {"callbackURL": callback})
    assert response.status_code in (400, 403), (response.status_code, response.content)
    assert alive(ada)



@pytest.mark.parametrize("headers", [
    {"HTTP_ORIGIN": "null"},  # a sandboxed iframe's form post
    {"HTTP_ORIGIN": "https://127.0.0.1.evil.test"},
    {"HTTP_SEC_FETCH_SITE": "cross-site", "HTTP_REFERER": "https://evil.test/"},  # no Origin at all
])
@pytest.mark.parametrize("content_type", [FORM, "text/plain"])
def test_sp_initiated_logout_is_not_a_cross_site_form_target(ada, headers, content_type):
    """Logout CSRF: a cross-site form (no CORS preflight) posting to POST /sso/saml2/logout/acme must
    not end the victim's session or clear its cookie."""
    ada.origin = None
    response = ada.generic("POST", f"{BASE}/sso/saml2/logout/acme", "callbackURL=/x", content_type=content_type,
                           **headers)
    assert response.status_code in (400, 403, 415), (response.status_code, response.content)
    assert alive(ada)
    assert "auth.session_token" not in response.cookies
