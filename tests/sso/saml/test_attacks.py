"""Attacks on the ACS (sso.md §5, §9, §10; issue 7 "Security").

Every response here starts as a GENUINE one: built for a real AuthnRequest of ours and signed by the
test IdP's key with the xmlsec1 binary (tests/sso/saml/idp_signer.py). A test then changes one thing
(a claim before signing, or the signed XML afterwards), so what refuses it is the real signature and
validation code. Each refusal must end in the spec's error redirect with no user, no account, no
session and no session cookie.
"""

import base64
import datetime
import time
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account, Session
from sso.models import SsoProvider
from tests.conftest import BASE, ORIGIN
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import Claims, now

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_acs_ready")]

IDP_ENTITY = "https://idp.acme.test/entity"
OTHER_IDP_ENTITY = "https://idp.other.test/entity"
IDP_SSO = "https://idp.acme.test/sso"
SIGNATURE = {"error": "saml_error"}
MULTIPLE = "saml_multiple_assertions"


def acs_path(provider_id):
    return f"{BASE}/sso/saml2/callback/{provider_id}"


def sp_entity(provider_id):
    return f"{ORIGIN}/sp/{provider_id}"


@pytest.fixture(scope="module")
def _acs_ready():
    pytest.importorskip("sso.saml.acs", reason="the ACS (sso/saml/acs.py) has not landed yet")
    idp_signer.require_binaries()


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    directory = tmp_path_factory.mktemp("attack-keys")
    return {name: idp_signer.make_keypair(directory, name) for name in ("idp", "evil")}


@pytest.fixture
def owner(make_user):
    return make_user(email="owner@acme.com")


def make_provider(owner, provider_id, cert, idp_entity=IDP_ENTITY, **config):
    return SsoProvider.objects.create(
        provider_id=provider_id, issuer=sp_entity(provider_id), domain="acme.com", user=owner, domain_verified=True,
        saml_config={"issuer": sp_entity(provider_id), "entryPoint": IDP_SSO, "cert": cert,
                     "idpMetadata": {"entityID": idp_entity}, "wantAssertionsSigned": True, **config})


@pytest.fixture
def acme(owner, keys):
    return make_provider(owner, "acme", keys["idp"].cert_pem)


class Flow:
    """One browser going through SP-initiated sign-in with the test IdP."""

    def __init__(self, api, keys, tmp_path):
        self.api, self.keys, self.tmp_path = api, keys, tmp_path

    def begin(self, provider_id="acme", callback="/dashboard", error_callback="/sso-error"):
        response = self.api.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": callback,
                                                      "errorCallbackURL": error_callback})
        assert response.status_code == 200, response.content
        query = parse_qs(urlsplit(response.json()["url"]).query)
        return idp_signer.request_id(query["SAMLRequest"][0]), query["RelayState"][0]

    def claims(self, provider_id="acme", request_id=None, **changes):
        acs = f"{ORIGIN}{acs_path(provider_id)}"
        values = {"issuer": IDP_ENTITY, "destination": acs, "audience": sp_entity(provider_id),
                  "in_response_to": request_id, **changes}
        return Claims(**values)

    def sign(self, xml, element_id, key="idp", **options):
        return idp_signer.sign(xml, self.keys[key], element_id, self.tmp_path, **options)

    def signed(self, claims, key="idp", assertion=True, response=True):
        xml = idp_signer.response_xml(claims)
        if assertion:
            xml = self.sign(xml, claims.assertion_id, key)
        if response:
            xml = self.sign(xml, claims.response_id, key)
        return xml

    def post(self, xml, relay_state=None, provider_id="acme", raw=None):
        data = {"SAMLResponse": raw if raw is not None else idp_signer.encode(xml)}
        if relay_state is not None:
            data["RelayState"] = relay_state
        return self.api.post(acs_path(provider_id), urlencode(data),
                             content_type="application/x-www-form-urlencoded")

    def sp_initiated(self, provider_id="acme", key="idp", assertion=True, response=True, **changes):
        request_id, relay_state = self.begin(provider_id)
        claims = self.claims(provider_id, request_id, **changes)
        return self.post(self.signed(claims, key, assertion, response), relay_state, provider_id)


@pytest.fixture
def flow(api, keys, tmp_path, acme):
    return Flow(api, keys, tmp_path)


def outcome(response, path="/sso-error"):
    """The error redirect's query, after checking it goes where the spec sends errors."""
    assert response.status_code == 302, response.content
    location = urlsplit(response["Location"])
    assert (location.scheme + "://" + location.netloc if location.netloc else "") + location.path in (
        path, f"{path}/"), response["Location"]
    return {key: values[-1] for key, values in parse_qs(location.query).items()}


def assert_nobody_signed_in(api, email="ada@acme.com"):
    assert not get_user_model().objects.filter(email=email).exists()
    assert not Account.objects.exclude(provider_id="credential").exists()
    assert not Session.objects.exists()
    assert "auth.session_token" not in api.cookies or not api.cookies["auth.session_token"].value


def refused(api, response, error, description=None, path="/sso-error"):
    result = outcome(response, path)
    assert result.get("error") == error, result
    if description is not None:
        assert result.get("error_description") == description, result
    assert_nobody_signed_in(api)
    return result


# --- the baseline the attacks start from ---------------------------------------------------------
def test_the_genuine_response_signs_in(flow, api):
    response = flow.sp_initiated()
    assert response.status_code == 302 and response["Location"] == "/dashboard"
    assert Account.objects.get(provider_id="acme").account_id == "ada@acme.com"
    assert api.cookies["auth.session_token"].value


def test_a_response_whose_assertion_alone_is_signed_signs_in(flow):
    assert flow.sp_initiated(response=False)["Location"] == "/dashboard"


# --- signatures -----------------------------------------------------------------------------------
def test_an_unsigned_response_is_refused(flow, api):
    refused(api, flow.sp_initiated(assertion=False, response=False), "saml_error")


def test_an_unsigned_response_is_refused_even_when_assertions_need_no_signature(flow, api):
    SsoProvider.objects.filter(provider_id="acme").update(
        saml_config={**SsoProvider.objects.get(provider_id="acme").saml_config, "wantAssertionsSigned": False})
    refused(api, flow.sp_initiated(assertion=False, response=False), "saml_error")


def test_a_signed_response_with_an_unsigned_assertion_is_refused_when_assertions_must_be_signed(flow, api):
    refused(api, flow.sp_initiated(assertion=False), "invalid_saml_response", "SAML assertion signature is required")


def test_a_response_signed_by_another_key_is_refused(flow, api):
    request_id, relay_state = flow.begin()
    xml = flow.signed(flow.claims(request_id=request_id), key="evil")
    stripped = xml
    while "<ds:KeyInfo>" in stripped:  # KeyInfo is outside what the signature covers
        start = stripped.index("<ds:KeyInfo>")
        stripped = stripped[:start] + stripped[stripped.index("</ds:KeyInfo>") + len("</ds:KeyInfo>"):]
    refused(api, flow.post(stripped, relay_state), "saml_error")


def test_a_signature_by_a_certificate_embedded_in_keyinfo_is_refused(flow, api):
    # xmlsec1 writes the attacker's certificate into KeyInfo; only configured certificates count.
    refused(api, flow.sp_initiated(key="evil"), "saml_error")


def test_a_replaced_certificate_is_used_from_the_next_response_on(flow, api, keys):
    # Loaded SP configurations are reused within a process: the cache must notice the new cert.
    assert flow.sp_initiated()["Location"] == "/dashboard"
    Session.objects.all().delete()
    api.cookies.clear()
    provider = SsoProvider.objects.get(provider_id="acme")
    SsoProvider.objects.filter(pk=provider.pk).update(saml_config={**provider.saml_config, "cert": keys["evil"].cert_pem})
    result = outcome(flow.sp_initiated(key="idp"))
    assert result.get("error") == "saml_error", result
    assert not Session.objects.exists()
    assert flow.sp_initiated(key="evil")["Location"] == "/dashboard"


def test_a_signed_assertion_whose_content_was_changed_is_refused(flow, api):
    request_id, relay_state = flow.begin()
    xml = flow.signed(flow.claims(request_id=request_id, name_id="eve@acme.com",
                                  attributes={"email": "eve@acme.com"}), response=False)
    forged = xml.replace("eve@acme.com", "ada@acme.com")
    refused(api, flow.post(forged, relay_state), "saml_error")


def test_a_signed_response_whose_assertion_was_swapped_is_refused(flow, api):
    request_id, relay_state = flow.begin()
    claims = flow.claims(request_id=request_id)
    xml = flow.signed(claims, assertion=False)
    start, end = xml.index("<saml:Assertion "), xml.index("</saml:Assertion>") + len("</saml:Assertion>")
    evil = idp_signer.assertion_xml(flow.claims(request_id=request_id, name_id="eve@acme.com",
                                                attributes={"email": "eve@acme.com"}), assertion_id=claims.assertion_id)
    refused(api, flow.post(xml[:start] + evil + xml[end:], relay_state), "saml_error")
    assert not get_user_model().objects.filter(email="eve@acme.com").exists()


def test_a_signature_from_a_deprecated_algorithm_is_refused_when_configured_to_reject(flow, api, configure_sso):
    configure_sso(saml={"algorithms": {"on_deprecated": "reject"}})
    request_id, relay_state = flow.begin()
    claims = flow.claims(request_id=request_id)
    xml = idp_signer.response_xml(claims)
    for element in (claims.assertion_id, claims.response_id):
        xml = flow.sign(xml, element, algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1",
                        digest="http://www.w3.org/2000/09/xmldsig#sha1")
    refused(api, flow.post(xml, relay_state), "saml_deprecated_algorithm")


# --- XML signature wrapping -------------------------------------------------------------------------
def _evil_assertion(flow, request_id, assertion_id=None):
    claims = flow.claims(request_id=request_id, name_id="eve@acme.com", attributes={"email": "eve@acme.com"})
    return idp_signer.assertion_xml(claims, assertion_id=assertion_id)


def _split_assertion(xml):
    start, end = xml.index("<saml:Assertion "), xml.rindex("</saml:Assertion>") + len("</saml:Assertion>")
    return xml[:start], xml[start:end], xml[end:]


def _wrapped(flow, shape):
    request_id, relay_state = flow.begin()
    claims = flow.claims(request_id=request_id)
    xml = flow.signed(claims)
    head, signed_assertion, tail = _split_assertion(xml)
    evil = _evil_assertion(flow, request_id)
    if shape == "evil_before":
        xml = head + evil + signed_assertion + tail
    elif shape == "evil_after":
        xml = head + signed_assertion + evil + tail
    elif shape == "same_id_twice":
        xml = head + _evil_assertion(flow, request_id, claims.assertion_id) + signed_assertion + tail
    elif shape == "signed_under_extensions":
        status = head.index("<samlp:Status>")
        head = head[:status] + f"<samlp:Extensions>{signed_assertion}</samlp:Extensions>" + head[status:]
        xml = head + evil + tail
    elif shape == "signed_under_object":
        # The signed assertion hidden in a ds:Object of the Response's own signature.
        end = head.index("</ds:Signature>")
        head = head[:end] + f"<ds:Object>{signed_assertion}</ds:Object>" + head[end:]
        xml = head + evil + tail
    elif shape == "signed_under_evil_assertion":
        # The signed assertion re-parented under the evil one (inside its Subject's extensions point).
        inner = evil.replace("</saml:Assertion>", f"<saml:Advice>{signed_assertion}</saml:Advice></saml:Assertion>")
        xml = head + inner + tail
    elif shape == "signed_response_reparented":
        # A new unsigned Response whose Extensions carry the whole genuine signed Response.
        evil_response = idp_signer.response_xml(
            Claims(issuer=IDP_ENTITY, destination=claims.destination, audience=claims.audience,
                   in_response_to=request_id, name_id="eve@acme.com", attributes={"email": "eve@acme.com"}),
            extensions=f"<samlp:Extensions>{xml}</samlp:Extensions>")
        xml = evil_response
    return xml, relay_state


@pytest.mark.parametrize("shape", ["evil_before", "evil_after", "same_id_twice", "signed_under_extensions",
                                   "signed_under_object", "signed_under_evil_assertion",
                                   "signed_response_reparented"])
def test_signature_wrapping_is_refused(flow, api, shape):
    xml, relay_state = _wrapped(flow, shape)
    refused(api, flow.post(xml, relay_state), MULTIPLE)
    assert not get_user_model().objects.filter(email="eve@acme.com").exists()


def test_a_signed_response_moved_under_an_unsigned_one_without_its_own_assertion_is_refused(flow, api, owner, keys):
    # One assertion in the document, so the count rule does not fire: the binding of the verified
    # node to the root must. With wantAssertionsSigned off only the Response signature protects it.
    SsoProvider.objects.filter(provider_id="acme").update(
        saml_config={**SsoProvider.objects.get(provider_id="acme").saml_config, "wantAssertionsSigned": False})
    request_id, relay_state = flow.begin()
    claims = flow.claims(request_id=request_id)
    genuine = flow.signed(claims, assertion=False)
    outer = (f'<samlp:Response xmlns:samlp="{idp_signer.SAMLP}" xmlns:saml="{idp_signer.SAML}" ID="_evil"'
             f' Version="2.0" IssueInstant="{idp_signer.iso(now())}" Destination="{claims.destination}">'
             f"<saml:Issuer>{IDP_ENTITY}</saml:Issuer><samlp:Extensions>{genuine}</samlp:Extensions>"
             f'<samlp:Status><samlp:StatusCode Value="{idp_signer.SUCCESS}"/></samlp:Status></samlp:Response>')
    result = outcome(flow.post(outer, relay_state))
    assert result["error"] in ("saml_error", "invalid_saml_response", "saml_no_assertion"), result
    assert_nobody_signed_in(api)


# --- XML parser attacks ---------------------------------------------------------------------------
def _with_doctype(flow, doctype, name_id=None):
    request_id, relay_state = flow.begin()
    xml = flow.signed(flow.claims(request_id=request_id))
    if name_id is not None:
        xml = xml.replace("ada@acme.com</saml:NameID>", f"{name_id}</saml:NameID>", 1)
    return f'<?xml version="1.0"?>{doctype}{xml}', relay_state


def test_a_doctype_is_refused(flow, api):
    xml, relay_state = _with_doctype(flow, "<!DOCTYPE samlp:Response>")
    refused(api, flow.post(xml, relay_state), "saml_invalid_xml")


def test_an_external_entity_is_refused(flow, api):
    xml, relay_state = _with_doctype(
        flow, '<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', name_id="&xxe;")
    refused(api, flow.post(xml, relay_state), "saml_invalid_xml")


def test_entity_expansion_is_refused_quickly(flow, api):
    entities = '<!ENTITY lol0 "lol">' + "".join(
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    xml, relay_state = _with_doctype(flow, f"<!DOCTYPE lolz [{entities}]>", name_id="&lol9;")
    started = time.monotonic()
    refused(api, flow.post(xml, relay_state), "saml_invalid_xml")
    assert time.monotonic() - started < 5


def test_a_response_that_is_not_base64_xml_is_refused(flow, api):
    _, relay_state = flow.begin()
    refused(api, flow.post(None, relay_state, raw=base64.b64encode(b"no markup here").decode()),
            "saml_invalid_encoding")


# --- comments inside signed text --------------------------------------------------------------------
def _comment_injected(flow, value, split_at, email_attribute=False):
    """A genuine response for ``value``, then ``<!---->`` inserted at ``split_at`` (the signature still holds)."""
    request_id, relay_state = flow.begin()
    attributes = {"email": value} if email_attribute else {"givenName": "Eve"}
    xml = flow.signed(flow.claims(request_id=request_id, name_id=value, attributes=attributes))
    commented = value[:split_at] + "<!---->" + value[split_at:]
    tag = "saml:AttributeValue" if email_attribute else "saml:NameID"
    start = xml.index(f">{value}</{tag}>")
    return xml[:start] + f">{commented}</{tag}>" + xml[start + len(f">{value}</{tag}>"):], relay_state


def test_a_comment_inside_the_nameid_is_refused(flow, api, make_user):
    # Exclusive c14n drops comments, so the signature still holds; a reader that stops at the
    # comment would see the victim. No IdP writes comments: the whole response is refused (I2).
    victim = make_user(email="victim@acme.com", email_verified=True)
    value = "victim@acme.com.evil.test"
    xml, relay_state = _comment_injected(flow, value, len("victim@acme.com"))
    refused(api, flow.post(xml, relay_state), "saml_error")
    assert not Session.objects.filter(user=victim).exists()


def test_a_comment_inside_the_email_attribute_is_refused(flow, api, make_user):
    victim = make_user(email="victim@acme.com", email_verified=True)
    value = "victim@acme.com.evil.test"
    xml, relay_state = _comment_injected(flow, value, len("victim@acme.com"), email_attribute=True)
    refused(api, flow.post(xml, relay_state), "saml_error")
    assert not Session.objects.filter(user=victim).exists()
    assert not Account.objects.filter(provider_id="acme", user=victim).exists()


# --- time conditions ----------------------------------------------------------------------------------
def test_an_expired_assertion_outside_the_skew_is_refused(flow, api):
    past = now() - datetime.timedelta(minutes=20)
    refused(api, flow.sp_initiated(issue_instant=past, not_on_or_after=now() - datetime.timedelta(minutes=6)),
            "saml_error")


def test_a_not_yet_valid_assertion_outside_the_skew_is_refused(flow, api):
    refused(api, flow.sp_initiated(not_before=now() + datetime.timedelta(minutes=6)), "saml_error")


def test_an_assertion_expired_within_the_skew_is_accepted(flow):
    moment = now() - datetime.timedelta(minutes=6)
    assert flow.sp_initiated(issue_instant=moment, not_on_or_after=now() - datetime.timedelta(minutes=2)
                             )["Location"] == "/dashboard"


def test_a_smaller_clock_skew_refuses_what_the_default_accepts(flow, api, configure_sso):
    configure_sso(saml={"clock_skew": 1000})
    moment = now() - datetime.timedelta(minutes=6)
    refused(api, flow.sp_initiated(issue_instant=moment, not_on_or_after=now() - datetime.timedelta(minutes=2)),
            "saml_error")


# --- binding to this SP -------------------------------------------------------------------------------
def test_a_wrong_audience_is_refused(flow, api):
    refused(api, flow.sp_initiated(audience="https://other-sp.test/entity"), "invalid_saml_response")


def test_a_wrong_destination_is_refused(flow, api):
    refused(api, flow.sp_initiated(destination=f"{ORIGIN}{acs_path('other')}", recipient=f"{ORIGIN}{acs_path('acme')}"),
            "invalid_saml_response")


def test_a_wrong_recipient_is_refused(flow, api):
    refused(api, flow.sp_initiated(recipient="https://evil.test/acs"), "invalid_saml_response")


def test_an_issuer_of_another_idp_is_refused(flow, api):
    refused(api, flow.sp_initiated(issuer=OTHER_IDP_ENTITY), "saml_error")


def test_a_response_for_provider_a_posted_to_provider_b_is_refused(flow, api, owner, keys):
    # Provider B trusts the same signing key (a multi-tenant IdP) but is another entity.
    make_provider(owner, "beta", keys["idp"].cert_pem, idp_entity=OTHER_IDP_ENTITY)
    request_id, relay_state = flow.begin("beta")
    xml = flow.signed(flow.claims("acme", request_id))
    result = outcome(flow.post(xml, relay_state, provider_id="beta"))
    assert result["error"] in ("saml_error", "invalid_saml_response"), result
    assert_nobody_signed_in(api)


def test_a_response_for_provider_a_posted_to_provider_b_of_the_same_idp_is_refused(flow, api, owner, keys):
    make_provider(owner, "beta", keys["idp"].cert_pem)
    request_id, relay_state = flow.begin("beta")
    xml = flow.signed(flow.claims("acme", request_id))
    refused(api, flow.post(xml, relay_state, provider_id="beta"), "invalid_saml_response")


# --- InResponseTo and unsolicited responses -------------------------------------------------------------
def test_an_unknown_in_response_to_is_refused(flow, api):
    _, relay_state = flow.begin()
    xml = flow.signed(flow.claims(request_id="_never-issued"))
    refused(api, flow.post(xml, relay_state), "invalid_saml_response", "Unknown or expired request ID")


def test_a_used_in_response_to_is_refused(flow, api):
    request_id, relay_state = flow.begin()
    assert flow.post(flow.signed(flow.claims(request_id=request_id)), relay_state)["Location"] == "/dashboard"
    Session.objects.all().delete()
    Account.objects.filter(provider_id="acme").delete()
    get_user_model().objects.filter(email="ada@acme.com").delete()
    api.cookies.clear()
    _, second_relay_state = flow.begin()
    refused(api, flow.post(flow.signed(flow.claims(request_id=request_id)), second_relay_state),
            "invalid_saml_response", "Unknown or expired request ID")


def test_an_in_response_to_of_another_provider_is_refused(flow, api, owner, keys):
    make_provider(owner, "beta", keys["idp"].cert_pem)
    foreign_request, _ = flow.begin("beta")
    _, relay_state = flow.begin("acme")
    result = refused(api, flow.post(flow.signed(flow.claims(request_id=foreign_request)), relay_state),
                     "invalid_saml_response")
    assert result["error_description"] in ("Provider mismatch", "Unknown or expired request ID")


def test_an_expired_request_is_refused(flow, api, configure_sso):
    configure_sso(saml={"request_ttl": 1000})
    request_id, relay_state = flow.begin()
    time.sleep(1.5)
    refused(api, flow.post(flow.signed(flow.claims(request_id=request_id)), relay_state),
            "invalid_saml_response", "Unknown or expired request ID")


def test_an_unsolicited_response_is_refused_when_idp_initiated_is_off(flow, api):
    response = flow.post(flow.signed(flow.claims()))
    refused(api, response, "unsolicited_response", "IdP-initiated SSO not allowed", path=ORIGIN)


# --- replay ------------------------------------------------------------------------------------------------
def test_the_same_assertion_posted_twice_is_refused(flow, api, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True, "enable_in_response_to_validation": False})
    xml = flow.signed(flow.claims())
    assert flow.post(xml).status_code == 302
    assert Session.objects.count() == 1
    api.cookies.clear()
    second = outcome(flow.post(xml), path=ORIGIN)
    assert second == {"error": "replay_detected", "error_description": "SAML assertion has already been used"}
    assert Session.objects.count() == 1


def test_the_same_sp_initiated_post_replayed_is_refused(flow, api):
    request_id, relay_state = flow.begin()
    xml = flow.signed(flow.claims(request_id=request_id))
    assert flow.post(xml, relay_state)["Location"] == "/dashboard"
    api.cookies.clear()
    replay = flow.post(xml, relay_state)
    assert replay.status_code == 302 and "error=" in replay["Location"]
    assert Session.objects.count() == 1
    assert "auth.session_token" not in api.cookies or not api.cookies["auth.session_token"].value


def test_the_replay_is_refused_with_a_new_response_id_around_the_same_assertion(flow, api, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True, "enable_in_response_to_validation": False})
    claims = flow.claims()
    first = flow.signed(claims, response=False)
    assert flow.post(first).status_code == 302
    api.cookies.clear()
    rewrapped = first.replace(f'ID="{claims.response_id}"', 'ID="_fresh-response-id"', 1)
    assert outcome(flow.post(rewrapped), path=ORIGIN)["error"] == "replay_detected"
    assert Session.objects.count() == 1


# --- size and status ---------------------------------------------------------------------------------------
def test_a_response_over_max_response_size_is_refused_before_parsing(flow, api):
    request_id, relay_state = flow.begin()
    big = flow.claims(request_id=request_id, attributes={"email": "ada@acme.com", "filler": "x" * 200_000})
    xml = flow.signed(big)
    result = refused(api, flow.post(xml, relay_state), "saml_error", path=ORIGIN)
    assert result["error_description"] == "SAML response exceeds maximum allowed size (262144 bytes)"


def test_max_response_size_is_configurable(flow, api, configure_sso):
    configure_sso(saml={"max_response_size": 2000})
    result = refused(api, flow.sp_initiated(), "saml_error", path=ORIGIN)
    assert result["error_description"] == "SAML response exceeds maximum allowed size (2000 bytes)"


@pytest.mark.parametrize("status", ["urn:oasis:names:tc:SAML:2.0:status:Requester",
                                    "urn:oasis:names:tc:SAML:2.0:status:Responder"])
def test_a_non_success_status_is_refused(flow, api, status):
    refused(api, flow.sp_initiated(status=status), "saml_error")


# --- RelayState and redirects -----------------------------------------------------------------------------
EVIL_TARGETS = ["https://evil.test/", "//evil.test/", "/\\evil.test/", "javascript:alert(1)"]


@pytest.mark.parametrize("target", EVIL_TARGETS)
def test_sign_in_refuses_an_evil_callback_url(flow, api, target):
    response = api.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": target})
    assert response.status_code == 403
    assert response.json()["code"] == "INVALID_CALLBACK_URL"


@pytest.mark.parametrize("target", EVIL_TARGETS)
def test_a_relay_state_that_is_a_url_is_never_followed(flow, api, configure_sso, target):
    configure_sso(saml={"allow_idp_initiated": True})
    response = flow.post(flow.signed(flow.claims()), relay_state=target)
    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith((ORIGIN, "/")) and not location.startswith(("//", "/\\")), location
    assert "evil" not in urlsplit(location).netloc
    assert "javascript" not in location.split("?")[0]


@pytest.mark.parametrize("target", EVIL_TARGETS)
def test_the_acs_get_with_a_session_never_redirects_to_an_evil_relay_state(signed_in, acme, target):
    response = signed_in.get(acs_path("acme"), {"RelayState": target})
    assert response.status_code == 302
    assert response["Location"].rstrip("/") == ORIGIN


def test_the_acs_get_without_a_session_is_an_invalid_request(api, acme):
    response = api.get(acs_path("acme"), {"RelayState": "/dashboard"})
    assert outcome(response, path=f"{ORIGIN}/error") == {"error": "invalid_request"}
