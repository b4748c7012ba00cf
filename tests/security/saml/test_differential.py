"""I2: the in-process verifier never accepts what the xmlsec1 binary refuses, and no tampering ever
yields a session for another NameID than the signed one (issue 12 F1, security.md "an optimisation
of a security check needs a differential test").

Inputs: the hostile corpus (tests/security/saml/corpus.py) and a few hundred random mutations
(seeded ``random.Random``) of genuine responses signed by the xmlsec1 binary: elements moved,
duplicated, wrapped (Extensions, Advice, ds:Object, a foreign element), renamed, text changed,
comments inserted. For every document sso.saml.verified accepts, the real binary must accept each
node we used: ``xmlsec1 --verify --id-attr:ID <node> --node-id <id> --enabled-key-data raw-x509-cert
--pubkey-cert-pem <cert>`` (the last-but-one option: the document's KeyInfo is not read, as in-process).
Every mutation also goes through the ACS; a session may only ever name the signed NameID.
"""

import base64
import copy
import random
import subprocess
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from lxml import etree

from authservice.models import Session
from sso.models import SamlUsedAssertion
from sso.saml import structure, verified
from tests.conftest import BASE
from tests.security.saml import corpus
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import DS, SAML, SAMLP

pytestmark = pytest.mark.django_db

SEED = 20261125
MUTATIONS = 300
WRAPPERS = (f"{{{SAMLP}}}Extensions", f"{{{SAML}}}Advice", f"{{{DS}}}Object", "{urn:evil}Box")
NAMES = (f"{{{SAML}}}Assertion", f"{{{SAMLP}}}Response", f"{{{DS}}}Signature", "{urn:evil}Assertion",
         f"{{{SAML}}}Issuer", f"{{{SAML}}}NameID")



@pytest.fixture(scope="module")
def genuine(idp_key, tmp_path_factory):
    """Eve's genuine responses: Response signed, Assertion signed, both signed."""
    forge = corpus.Forge(idp_key, tmp_path_factory.mktemp("genuine"))
    _, response_signed = forge.response_signed()
    _, assertion_signed = forge.assertion_signed()
    claims = forge.claims()
    both = forge.sign(forge.sign(idp_signer.response_xml(claims), claims.assertion_id), claims.response_id)
    return [response_signed, assertion_signed, both]


def accepted(document, cert):
    """sso.saml.verified's answer: the Verified response, or None when refused."""
    try:
        root = structure.parse(document)
        return verified.verify_response(document, root, [cert])
    except (structure.StructureRefused, verified.VerificationRefused):
        return None


def binary_accepts(document, node_name, node_id, cert_path, tmp_path):
    path = tmp_path / "document.xml"
    path.write_bytes(document)
    # --enabled-key-data raw-x509-cert: the key is the configured certificate, as in-process; the
    # document's KeyInfo (not signed, never used by us) is not read.
    result = subprocess.run(["xmlsec1", "--verify", "--id-attr:ID", node_name, "--node-id", node_id,
                             "--enabled-key-data", "raw-x509-cert", "--pubkey-cert-pem", str(cert_path),
                             str(path)], capture_output=True, timeout=20)
    return result.returncode == 0


def assert_binary_agrees(document, idp_key, tmp_path):
    result = accepted(document, idp_key.cert_pem)
    if result is None:
        return None
    for node_name, node_id in result.signed_nodes:
        assert binary_accepts(document, node_name, node_id, idp_key.cert_path, tmp_path), (node_name, node_id)
    return result


def mutate(document, rng):
    """One random structural or textual change of ``document``; returns bytes."""
    root = etree.fromstring(document)
    elements = [element for element in root.iter() if isinstance(element.tag, str)]
    target, place = rng.choice(elements[1:]), rng.choice(elements)
    operation = rng.choice(("move", "duplicate", "wrap", "rename", "text", "comment"))
    if operation == "move" and place is not target and target not in place.iterancestors() and place not in target.iter():
        place.insert(rng.randint(0, len(place)), target)
    elif operation == "duplicate":
        place.insert(rng.randint(0, len(place)), copy.deepcopy(target))
    elif operation == "wrap":
        parent = target.getparent()
        wrapper = etree.Element(rng.choice(WRAPPERS))
        parent.replace(target, wrapper)
        wrapper.append(target)
    elif operation == "rename":
        target.tag = rng.choice(NAMES)
    elif operation == "text":
        target.text = rng.choice((corpus.VICTIM, "x", (target.text or "") + " "))
    elif operation == "comment":
        target.append(etree.Comment(""))
    return etree.tostring(root)


def test_the_binary_accepts_what_the_verifier_accepts_in_the_genuine_responses(genuine, idp_key, tmp_path):
    for document in genuine:
        assert assert_binary_agrees(document.encode(), idp_key, tmp_path) is not None


@pytest.mark.parametrize("variant", sorted(corpus.CORPUS))
def test_the_verifier_refuses_every_corpus_document(idp_key, tmp_path, variant):
    document = corpus.CORPUS[variant](corpus.Forge(idp_key, tmp_path)).encode()
    assert assert_binary_agrees(document, idp_key, tmp_path) is None


def test_random_mutations_are_refused_or_accepted_by_the_binary_too_and_keep_the_signed_name_id(
        genuine, idp_key, tmp_path):
    rng = random.Random(SEED)
    for _ in range(MUTATIONS):
        document = rng.choice(genuine).encode()
        for _ in range(rng.randint(1, 2)):
            document = mutate(document, rng)
        result = assert_binary_agrees(document, idp_key, tmp_path)
        if result is not None:
            assert result.name_id == corpus.ATTACKER


@pytest.fixture
def idp_initiated_provider(acme, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True, "enable_in_response_to_validation": False})
    return acme


def test_no_mutation_yields_a_session_for_another_name_id_than_the_signed_one(
        api, idp_initiated_provider, genuine, make_user):
    make_user(email=corpus.VICTIM, email_verified=True)
    rng = random.Random(SEED + 1)
    sessions = 0
    for case in range(MUTATIONS // 2):
        document = rng.choice(genuine).encode()
        if case:  # the first case is the genuine response itself: the invariant is not vacuous
            for _ in range(rng.randint(1, 2)):
                document = mutate(document, rng)
        body = urlencode({"SAMLResponse": base64.b64encode(document).decode()})
        api.post(f"{BASE}/sso/saml2/callback/acme", body, content_type="application/x-www-form-urlencoded")
        for session in Session.objects.select_related("user"):
            assert session.user.email == corpus.ATTACKER
            sessions += 1
        Session.objects.all().delete()
        SamlUsedAssertion.objects.all().delete()
        api.cookies.clear()
    assert sessions >= 1
    assert not get_user_model().objects.filter(email__icontains="evil").exists()
