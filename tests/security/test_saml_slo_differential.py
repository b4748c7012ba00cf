"""SAML Single Logout, I2: what the SLO service accepts, the xmlsec1 binary accepts too, and no mutation
of a genuine signed LogoutRequest ever ends a session the signed one did not name.

Inputs: a genuine LogoutRequest for ada (signed by the xmlsec1 binary) and 200 seeded random mutations:
elements duplicated, moved, wrapped (Extensions, ds:Object, a foreign element), renamed, text changed,
comments inserted. For each mutation the checks of sso.saml.slo_inbound (shape, then the signature by
sso.saml.signature) either refuse it, or accept it and ``xmlsec1 --verify`` (the document's KeyInfo
unused) accepts it as well. Every mutation is also posted to the SLO service, with bob signed in: bob's
session survives them all.
"""

import base64
import copy
import random
import subprocess
from urllib.parse import urlencode

import pytest
from lxml import etree

from sso.saml import signature, structure
from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    SAML,
    SAMLP,
    Message,
    acme,
    alive,
    configure_sso,
    idp_entity,
    post_slo,
    saml_signed_in,
    sign_xml,
    slo_keys,
    slo_on,
    slo_url,
)

DS = "http://www.w3.org/2000/09/xmldsig#"
SEED = 14_02
MUTATIONS = 200
WRAPPERS = (f"{{{SAMLP}}}Extensions", f"{{{DS}}}Object", "{urn:evil}Box")
NAMES = (f"{{{SAML}}}NameID", f"{{{SAMLP}}}SessionIndex", f"{{{SAML}}}Issuer", f"{{{DS}}}Signature",
         f"{{{SAMLP}}}LogoutRequest", "{urn:evil}NameID")


def mutate(document, rng):
    root = etree.fromstring(document)
    elements = list(root.iter())
    target = rng.choice(elements)
    operation = rng.randrange(6)
    if operation == 0 and target is not root:  # duplicate somewhere
        rng.choice(elements).append(copy.deepcopy(target))
    elif operation == 1 and target is not root:  # move
        destination = rng.choice([e for e in elements if target not in e.iterancestors() and e is not target])
        destination.append(target)
    elif operation == 2:  # wrap a copy of the NameID or the whole request
        wrapper = etree.SubElement(root, rng.choice(WRAPPERS))
        wrapper.append(copy.deepcopy(rng.choice([root.find(f"{{{SAML}}}NameID"), target])))
    elif operation == 3:
        target.tag = rng.choice(NAMES)
    elif operation == 4:
        target.text = "bob@acme.com"
    else:
        target.append(etree.Comment("x"))
    return etree.tostring(root)


def we_accept(document, cert):
    try:
        root = structure.parse(document)
        structure.check_logout(root, structure.LOGOUT_REQUEST)
        signature.verify_element(root, [cert])
    except (structure.StructureRefused, signature.Refused, Exception):  # noqa: BLE001 - xmlsec.Error and co.
        return False
    return True


def binary_accepts(document, keypair, message_id, tmp_path):
    path = tmp_path / "candidate.xml"
    path.write_bytes(document)
    result = subprocess.run(
        ["xmlsec1", "--verify", "--id-attr:ID", f"{SAMLP}:LogoutRequest", "--node-id", message_id,
         "--enabled-key-data", "raw-x509-cert", "--pubkey-cert-pem", str(keypair.cert_path), str(path)],
        capture_output=True)
    return result.returncode == 0


def test_mutations_of_a_genuine_logout_request_never_reach_bob(acme, make_user, slo_keys, tmp_path):
    bob = saml_signed_in(make_user, acme, "bob@acme.com", "_session-bob")
    genuine = Message(issuer=idp_entity("acme"), destination=slo_url("acme"), name_id="ada@acme.com",
                      session_index="_session-ada")
    signed = sign_xml(genuine.xml(), slo_keys["idp"], genuine.message_id, tmp_path).encode()
    cert = signature.certificate_pem(slo_keys["idp"].cert_body)
    assert we_accept(signed, cert)
    rng = random.Random(SEED)
    accepted = 0
    for _ in range(MUTATIONS):
        document = mutate(signed, rng)
        if we_accept(document, cert):
            accepted += 1
            assert binary_accepts(document, slo_keys["idp"], genuine.message_id, tmp_path), document
        post_slo("acme", urlencode({"SAMLRequest": base64.b64encode(document).decode()}))
        assert alive(bob), document
    assert accepted < MUTATIONS  # the mutations do bite
