"""The HTTP-Redirect signature check (sso.saml.signature.verify_redirect, libxmlsec1) never accepts what
an independent implementation refuses (security.md, "an optimisation of a security check needs a
differential test"; I2).

``cryptography`` (OpenSSL) verifies the same octets and signature with the certificate's public key; on
a genuine query and on random mutations of its octets, its signature bytes and its SigAlg, the two must
agree: libxmlsec1 accepts exactly when OpenSSL does.
"""

import base64
import random

import pytest
import xmlsec
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

from sso.saml import signature
from tests.sso.saml import idp_signer

SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
HASHES = {SHA256: hashes.SHA256(), "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512": hashes.SHA512(),
          "http://www.w3.org/2000/09/xmldsig#rsa-sha1": hashes.SHA1()}


@pytest.fixture(scope="module")
def keypair(tmp_path_factory):
    idp_signer.require_binaries()
    return idp_signer.make_keypair(tmp_path_factory.mktemp("redirect-diff"), "idp")


def ours(octets, sig_alg, value, cert_pem):
    try:
        signature.verify_redirect(octets, sig_alg, value, [cert_pem])
    except (signature.Refused, xmlsec.Error):
        return False
    return True


def theirs(octets, sig_alg, value, cert_pem):
    if sig_alg not in HASHES:
        return False
    public_key = x509.load_pem_x509_certificate(cert_pem.encode()).public_key()
    try:
        public_key.verify(value, octets, padding.PKCS1v15(), HASHES[sig_alg])
    except InvalidSignature:
        return False
    return True


def signed(keypair, sig_alg=SHA256):
    octets = (b"SAMLRequest=" + base64.b64encode(b"<samlp:LogoutRequest/>").replace(b"=", b"%3D")
              + b"&RelayState=abc&SigAlg=" + sig_alg.encode().replace(b":", b"%3A").replace(b"/", b"%2F"))
    key = serialization.load_pem_private_key(keypair.key_path.read_bytes(), None)
    return octets, key.sign(octets, padding.PKCS1v15(), HASHES[sig_alg])


@pytest.mark.parametrize("sig_alg", list(HASHES))
def test_both_accept_a_genuine_signature(keypair, sig_alg):
    octets, value = signed(keypair, sig_alg)
    assert ours(octets, sig_alg, value, keypair.cert_pem) is True
    assert theirs(octets, sig_alg, value, keypair.cert_pem) is True


def _flip(data, rng):
    data = bytearray(data)
    position = rng.randrange(len(data))
    data[position] ^= 1 << rng.randrange(8)
    return bytes(data)


def test_random_mutations_are_judged_alike(keypair):
    rng = random.Random(14)
    octets, value = signed(keypair)
    algorithms = [*HASHES, "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384", "urn:x", ""]
    for _ in range(300):
        case_octets, case_value, case_alg = octets, value, SHA256
        choice = rng.randrange(4)
        if choice == 0:
            case_octets = _flip(octets, rng)
        elif choice == 1:
            case_value = _flip(value, rng)
        elif choice == 2:
            case_value = value[: rng.randrange(len(value))]
        else:
            case_alg = rng.choice(algorithms)
        verdict = ours(case_octets, case_alg, case_value, keypair.cert_pem)
        assert verdict == theirs(case_octets, case_alg, case_value, keypair.cert_pem), (choice, case_alg)
        assert verdict is False or (case_octets, case_value, case_alg) == (octets, value, SHA256)


def test_another_certificate_never_verifies(keypair, tmp_path):
    other = idp_signer.make_keypair(tmp_path, "other")
    octets, value = signed(keypair)
    assert ours(octets, SHA256, value, other.cert_pem) is False
    assert theirs(octets, SHA256, value, other.cert_pem) is False
