"""Hostile SAML Responses built from GENUINE ones (signed by the test IdP's key with the xmlsec1
binary, tests/sso/saml/idp_signer.py), as an attacker holding the IdP's signed messages builds them.

The attacker ("eve@acme.com") holds responses the IdP signed for herself, and a signed NoPassive
error (an IdP signs one for anyone who sends IsPassive="true"). The victim is "victim@acme.com".
Every builder returns the XML of a response that must be refused; ``CORPUS`` names them after the
wrapping variants of Somorovsky et al., "On Breaking SAML" (USENIX Security 2012), XSW1-XSW8, and
the other tricks of issue 12 F1.
"""

import re

from tests.conftest import ORIGIN
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import DS, SAML, SAMLP, Claims

IDP_ENTITY = "https://idp.acme.test/entity"
IDP_SSO = "https://idp.acme.test/sso"
ATTACKER = "eve@acme.com"
VICTIM = "victim@acme.com"
RESPONDER = "urn:oasis:names:tc:SAML:2.0:status:Responder"
NO_PASSIVE = "urn:oasis:names:tc:SAML:2.0:status:NoPassive"


def acs_url(provider_id):
    return f"{ORIGIN}/api/auth/sso/saml2/callback/{provider_id}"


def sp_entity(provider_id):
    return f"{ORIGIN}/sp/{provider_id}"


class Forge:
    """Genuine signed material for one sign-in (``request_id``) and the victim's unsigned claims."""

    def __init__(self, keypair, tmp_path, request_id=None, provider_id="acme"):
        self.keypair, self.tmp_path, self.request_id, self.provider_id = keypair, tmp_path, request_id, provider_id

    def claims(self, name_id=ATTACKER, **changes):
        values = {"issuer": IDP_ENTITY, "destination": acs_url(self.provider_id),
                  "audience": sp_entity(self.provider_id), "in_response_to": self.request_id,
                  "name_id": name_id, "attributes": {"email": name_id}, **changes}
        return Claims(**values)

    def sign(self, xml, element_id):
        return idp_signer.sign(xml, self.keypair, element_id, self.tmp_path)

    def response_signed(self, claims=None):
        """Eve's genuine response, the Response signed, its Assertion not."""
        claims = claims or self.claims()
        return claims, self.sign(idp_signer.response_xml(claims), claims.response_id)

    def assertion_signed(self, claims=None):
        """Eve's genuine response, the Assertion signed, the Response not."""
        claims = claims or self.claims()
        return claims, self.sign(idp_signer.response_xml(claims), claims.assertion_id)

    def no_passive(self):
        """A genuine signed NoPassive error: a signed Response with no assertion."""
        claims = self.claims(status=RESPONDER)
        xml = idp_signer.response_xml(claims, assertion="").replace(
            f'<samlp:StatusCode Value="{RESPONDER}"/>',
            f'<samlp:StatusCode Value="{RESPONDER}"><samlp:StatusCode Value="{NO_PASSIVE}"/></samlp:StatusCode>')
        return claims, self.sign(xml, claims.response_id)

    def victim_assertion(self, assertion_id=None):
        return idp_signer.assertion_xml(self.claims(VICTIM), assertion_id=assertion_id)

    def outer_response(self, inner, response_id="_evil-response"):
        """A new, unsigned Response (Success) around ``inner``: where the forged content goes."""
        claims = self.claims(VICTIM, response_id=response_id)
        return (f'<samlp:Response xmlns:samlp="{SAMLP}" xmlns:saml="{SAML}" ID="{response_id}" Version="2.0"'
                f' IssueInstant="{idp_signer.iso(claims.issue_instant)}" Destination="{claims.destination}"'
                + (f' InResponseTo="{self.request_id}"' if self.request_id else "")
                + f"><saml:Issuer>{IDP_ENTITY}</saml:Issuer>{inner}</samlp:Response>")


def signature_of(xml, element_id):
    """The ds:Signature the signer put into the element ``element_id`` (right after its Issuer)."""
    start = xml.index("<ds:Signature", xml.index(f'ID="{element_id}"'))
    end = xml.index("</ds:Signature>", start) + len("</ds:Signature>")
    return xml[start:end]


def without(xml, part):
    return xml.replace(part, "", 1)


def with_object(signature, content):
    return signature.replace("</ds:Signature>", f"<ds:Object>{content}</ds:Object></ds:Signature>")


def assertion_of(xml):
    start = xml.index("<saml:Assertion ")
    return xml[start:xml.rindex("</saml:Assertion>") + len("</saml:Assertion>")]


def status():
    return f'<samlp:Status><samlp:StatusCode Value="{idp_signer.SUCCESS}"/></samlp:Status>'


def fake_signature(reference_id):
    """A well-formed signature over ``reference_id`` that was never signed (empty values)."""
    return idp_signer.signature_template(reference_id).replace(
        "<ds:DigestValue></ds:DigestValue>", "<ds:DigestValue>AAAA</ds:DigestValue>").replace(
        "<ds:SignatureValue></ds:SignatureValue>", "<ds:SignatureValue>AAAA</ds:SignatureValue>").replace(
        "<ds:KeyInfo><ds:X509Data></ds:X509Data></ds:KeyInfo>", "")


# --- the attack: a signed NoPassive error hidden in a ds:Object -----------------------------
def no_passive_in_object(forge):
    """Issue 12 F1 as found: the signed NoPassive Response, minus its signature, hidden in a
    ds:Signature/ds:Object; its signature first under a new Response holding an unsigned Assertion
    for the victim; a last, never signed, signature naming the new Response for readers that take
    the last one."""
    _, genuine = forge.no_passive()
    response_id = re.search(r'ID="([^"]+)"', genuine).group(1)
    signature = signature_of(genuine, response_id)
    hider = f'<ds:Signature xmlns:ds="{DS}"><ds:Object>{without(genuine, signature)}</ds:Object></ds:Signature>'
    return forge.outer_response(signature + hider + fake_signature("_evil-response") + status()
                                + forge.victim_assertion())


def no_passive_in_object_of_its_signature(forge):
    _, genuine = forge.no_passive()
    response_id = re.search(r'ID="([^"]+)"', genuine).group(1)
    signature = signature_of(genuine, response_id)
    return forge.outer_response(with_object(signature, without(genuine, signature)) + status()
                                + forge.victim_assertion())


# --- XSW1-XSW8 --------------------------------------------------------------------------------------
def xsw1(forge):
    """The signed Response copied into the Signature's ds:Object; a new Response holds the victim."""
    claims, genuine = forge.response_signed()
    return forge.outer_response(with_object(signature_of(genuine, claims.response_id), genuine)
                                + status() + forge.victim_assertion())


def xsw2(forge):
    """The signed Response as a detached sibling before the (copied) signature."""
    claims, genuine = forge.response_signed()
    return forge.outer_response(genuine + signature_of(genuine, claims.response_id) + status()
                                + forge.victim_assertion())


def xsw3(forge):
    """A victim Assertion before the signed one, as a sibling."""
    claims, genuine = forge.assertion_signed()
    signed = assertion_of(genuine)
    return genuine.replace(signed, forge.victim_assertion() + signed)


def xsw4(forge):
    """The signed Assertion inside the victim's."""
    claims, genuine = forge.assertion_signed()
    signed = assertion_of(genuine)
    evil = forge.victim_assertion().replace("</saml:Assertion>", signed + "</saml:Assertion>")
    return genuine.replace(signed, evil)


def xsw5(forge):
    """The victim Assertion carries the copied signature; the signed one is appended after it."""
    claims, genuine = forge.assertion_signed()
    signed = assertion_of(genuine)
    signature = signature_of(genuine, claims.assertion_id)
    evil = forge.victim_assertion(claims.assertion_id).replace("</saml:Issuer>", "</saml:Issuer>" + signature, 1)
    return genuine.replace(signed, evil + without(signed, signature).replace(claims.assertion_id, "_moved", 1))


def xsw6(forge):
    """The victim Assertion's copied signature holds the signed Assertion in its ds:Object."""
    claims, genuine = forge.assertion_signed()
    signed = assertion_of(genuine)
    signature = with_object(signature_of(genuine, claims.assertion_id), signed)
    evil = forge.victim_assertion().replace("</saml:Issuer>", "</saml:Issuer>" + signature, 1)
    return genuine.replace(signed, evil)


def xsw7(forge):
    """The signed Assertion under an Extensions element inside the victim's Assertion."""
    claims, genuine = forge.assertion_signed()
    signed = assertion_of(genuine)
    evil = forge.victim_assertion().replace(
        "</saml:Issuer>", f"</saml:Issuer><samlp:Extensions>{signed}</samlp:Extensions>", 1)
    return genuine.replace(signed, evil)


def xsw8(forge):
    """The victim Assertion carries the signature, whose ds:Object holds the signed Assertion minus it."""
    claims, genuine = forge.assertion_signed()
    signed = assertion_of(genuine)
    signature_text = signature_of(genuine, claims.assertion_id)
    signature = with_object(signature_text, without(signed, signature_text))
    evil = forge.victim_assertion(claims.assertion_id).replace("</saml:Issuer>", "</saml:Issuer>" + signature, 1)
    return genuine.replace(signed, evil)


def signed_assertion_in_advice(forge):
    claims, genuine = forge.assertion_signed()
    signed = assertion_of(genuine)
    evil = forge.victim_assertion().replace("</saml:Assertion>", f"<saml:Advice>{signed}</saml:Advice></saml:Assertion>")
    return genuine.replace(signed, evil)


def signed_response_in_extensions(forge):
    claims, genuine = forge.response_signed()
    return forge.outer_response(f"<samlp:Extensions>{genuine}</samlp:Extensions>" + status()
                                + forge.victim_assertion())


# --- text, namespaces, IDs, Issuers, References --------------------------------------------------------
def comment_in_name_id(forge):
    """alice@corp.test<!---->.evil.test: c14n drops the comment, the signature still holds."""
    value = VICTIM + ".evil.test"
    claims, genuine = forge.response_signed(forge.claims(value))
    return genuine.replace(f">{value}</saml:NameID>", f">{VICTIM}<!---->.evil.test</saml:NameID>")


def prefix_rebinding(forge):
    """A victim Assertion under a prefix bound to another namespace, beside the genuine one: a reader
    matching on the ``saml:`` prefix sees two assertions, a namespace-aware one sees one."""
    claims, genuine = forge.assertion_signed()
    signed = assertion_of(genuine)
    evil = forge.victim_assertion().replace(f'xmlns:saml="{SAML}"', 'xmlns:saml="urn:evil:not-saml"', 1)
    return genuine.replace(signed, evil + signed)


def prefix_rebinding_of_ds(forge):
    """A second signature whose ``ds`` prefix is rebound, so a namespace-blind count misses it."""
    claims, genuine = forge.response_signed()
    forged = fake_signature(claims.response_id).replace(f'xmlns:ds="{DS}"', 'xmlns:ds="urn:evil:not-ds"', 1)
    return genuine.replace("</samlp:Response>", forged + "</samlp:Response>")


def default_namespace_on_a_foreign_element(forge):
    """A default namespace makes an unprefixed Assertion a real SAML one, inside a foreign element."""
    claims, genuine = forge.assertion_signed()
    evil = forge.victim_assertion().replace("saml:", "").replace(f' xmlns:saml="{SAML}"', "", 1)
    hidden = f'<samlp:Extensions><x:Box xmlns:x="urn:evil"><Box2 xmlns="{SAML}">{evil}</Box2></x:Box></samlp:Extensions>'
    return genuine.replace("<samlp:Status>", hidden + "<samlp:Status>", 1)


def foreign_element_named_assertion(forge):
    claims, genuine = forge.assertion_signed()
    evil = forge.victim_assertion().replace("<saml:Assertion ", '<x:Assertion xmlns:x="urn:evil" ', 1).replace(
        "</saml:Assertion>", "</x:Assertion>")
    return genuine.replace("<samlp:Status>", f"<samlp:Extensions>{evil}</samlp:Extensions><samlp:Status>", 1)


def duplicate_id(forge):
    """Another element carrying the signed Assertion's ID (xmlsec must find one element by it)."""
    claims, genuine = forge.assertion_signed()
    extra = f'<samlp:Extensions><x:Twin xmlns:x="urn:evil" ID="{claims.assertion_id}"/></samlp:Extensions>'
    return genuine.replace("<samlp:Status>", extra + "<samlp:Status>", 1)


def duplicate_id_in_id_attribute_of_other_case(forge):
    claims, genuine = forge.assertion_signed()
    extra = f'<samlp:Extensions><x:Twin xmlns:x="urn:evil" Id="{claims.assertion_id}"/></samlp:Extensions>'
    return genuine.replace("<samlp:Status>", extra + "<samlp:Status>", 1)


def two_issuers(forge):
    claims, genuine = forge.assertion_signed()
    issuer = f"<saml:Issuer>{IDP_ENTITY}</saml:Issuer>"
    return genuine.replace(issuer, issuer + issuer, 1)


def reference_to_another_element(forge):
    """The Response carries the Assertion's signature (its Reference names the Assertion, not the
    Response), and the victim's Assertion replaces the signed one, which hides in Extensions."""
    claims, genuine = forge.assertion_signed()
    signed = assertion_of(genuine)
    signature = signature_of(genuine, claims.assertion_id)
    head = genuine.replace(signed, forge.victim_assertion())
    head = head.replace("</saml:Issuer>", "</saml:Issuer>" + signature, 1)
    return head.replace("<samlp:Status>", f"<samlp:Extensions>{signed}</samlp:Extensions><samlp:Status>", 1)


def unsigned_response_around_the_signed_error(forge):
    """The signed NoPassive Response as the only signed thing, in Extensions of an unsigned one."""
    _, genuine = forge.no_passive()
    return forge.outer_response(f"<samlp:Extensions>{genuine}</samlp:Extensions>" + status()
                                + forge.victim_assertion())


CORPUS = {builder.__name__: builder for builder in (
    no_passive_in_object, no_passive_in_object_of_its_signature, xsw1, xsw2, xsw3, xsw4, xsw5, xsw6, xsw7, xsw8,
    signed_assertion_in_advice, signed_response_in_extensions, comment_in_name_id, prefix_rebinding,
    prefix_rebinding_of_ds, default_namespace_on_a_foreign_element, foreign_element_named_assertion,
    duplicate_id, duplicate_id_in_id_attribute_of_other_case, two_issuers, reference_to_another_element,
    unsigned_response_around_the_signed_error)}
