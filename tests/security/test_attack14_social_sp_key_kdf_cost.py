"""SAML SP keys, attack pass 14: an encrypted key that costs minutes to open (I6).

An encrypted PKCS#8 key carries its own key-derivation parameters, and opening it pays them before the
password is even compared. A 400-byte EC key with 3,000,000 PBKDF2 iterations took 4.5 s to load here
(right or wrong password); 2**31 iterations are hours. Any signed-up user could send one to
/sso/register or /sso/update-provider (every password the check tries pays it again), and a stored one
to every worker's first sign-in start or ACS.

Fixed at the mechanism: sso.saml_config.encrypted_key_refusal reads every encrypted block's KDF
parameters from the DER before anything loads it, at register, update and first use alike: PBKDF2 (or
PBES1) at most 100,000 iterations, scrypt at most N*r*p = 16384*8 (16 MiB); a block it cannot read
is refused, not tried. Loads are counted, not timed.
"""

import base64
import subprocess

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from sso.models import SsoProvider
from tests.conftest import ORIGIN, ApiClient
from tests.sso.conftest import _sso_defaults, configure_sso, sign_in  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

PBES2, PBKDF2 = "2a864886f70d01050d", "2a864886f70d01050c"
HMAC_SHA256, AES256_CBC, SCRYPT = "2a864886f70d0209", "60864801650304012a", "2b06010401da47040b"


def _der(tag, content):
    length = len(content)
    if length < 0x80:
        return bytes([tag, length]) + content
    raw = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(raw)]) + raw + content


def _seq(*parts):
    return _der(0x30, b"".join(parts))


def _int(value):
    return _der(0x02, value.to_bytes(value.bit_length() // 8 + 1, "big"))


def _oid(hex_value):
    return _der(0x06, bytes.fromhex(hex_value))


def _encrypted_pem(kdf):
    """An EncryptedPrivateKeyInfo with ``kdf`` as its PBES2 key derivation (its data is never opened)."""
    info = _seq(_seq(_oid(PBES2), _seq(kdf, _seq(_oid(AES256_CBC), _der(0x04, b"\0" * 16)))),
                _der(0x04, b"\x11" * 144))
    body = base64.encodebytes(info).decode()
    return f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{body}-----END ENCRYPTED PRIVATE KEY-----\n"


def _pbkdf2(iterations):
    return _encrypted_pem(_seq(_oid(PBKDF2), _seq(_der(0x04, b"s" * 8), _int(iterations),
                                                  _seq(_oid(HMAC_SHA256), _der(0x05, b"")))))


def _scrypt(n, r, p):
    return _encrypted_pem(_seq(_oid(SCRYPT), _seq(_der(0x04, b"s" * 8), _int(n), _int(r), _int(p))))


@pytest.fixture
def key_loads(monkeypatch):
    """Every private key parsed from PEM in this process."""
    calls = []
    real = serialization.load_pem_private_key

    def counted(*args, **kwargs):
        calls.append(args[0][:40])
        return real(*args, **kwargs)

    monkeypatch.setattr(serialization, "load_pem_private_key", counted)
    return calls


@pytest.fixture
def idp_cert(tmp_path):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=idp",
                    "-keyout", str(tmp_path / "idp.key"), "-out", str(tmp_path / "idp.crt")],
                   check=True, capture_output=True)
    return (tmp_path / "idp.crt").read_text()


def _register(client, idp_cert, sp, **extra):
    return client.api_post("/sso/register", {
        "providerId": "evil", "issuer": f"{ORIGIN}/sp/evil", "domain": "evil.test",
        "samlConfig": {"entryPoint": "https://idp.evil.test/sso", "cert": idp_cert,
                       "idpMetadata": {"entityID": "https://idp.evil.test"}, "spMetadata": sp, **extra}})


def _refused_unopened(response, key_loads):
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "SAML_CONFIG_INVALID"
    assert key_loads == []  # refused before anything paid the key's derivation
    assert not SsoProvider.objects.filter(provider_id="evil").exists()


@pytest.mark.parametrize("iterations", [3_000_000, 2**31 - 1, 2**64])
def test_a_key_derived_with_millions_of_pbkdf2_iterations_is_refused_unopened(sign_in, idp_cert, key_loads,
                                                                              iterations):
    response = _register(sign_in("mallory@evil.test"), idp_cert, {"privateKey": _pbkdf2(iterations),
                                                                  "privateKeyPass": "pw"})
    _refused_unopened(response, key_loads)


def test_a_costly_key_as_the_decryption_key_is_refused_unopened(sign_in, idp_cert, key_loads):
    response = _register(sign_in("mallory@evil.test"), idp_cert, {"encPrivateKey": _pbkdf2(3_000_000),
                                                                  "encPrivateKeyPass": "pw"})
    _refused_unopened(response, key_loads)


@pytest.mark.parametrize("n, r, p", [(2**20, 8, 1), (16384, 8, 64), (16384, 2**20, 1)])
def test_a_key_derived_with_costly_scrypt_parameters_is_refused_unopened(sign_in, idp_cert, key_loads, n, r, p):
    response = _register(sign_in("mallory@evil.test"), idp_cert, {"privateKey": _scrypt(n, r, p),
                                                                  "privateKeyPass": "pw"})
    _refused_unopened(response, key_loads)


def test_a_costly_block_after_a_plain_key_is_refused_unopened(sign_in, idp_cert, key_loads):
    plain = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    response = _register(sign_in("mallory@evil.test"), idp_cert, {"privateKey": plain + _pbkdf2(3_000_000),
                                                                  "privateKeyPass": "pw"})
    _refused_unopened(response, key_loads)


def test_an_encrypted_block_that_cannot_be_read_is_refused_unopened(sign_in, idp_cert, key_loads):
    pem = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIBAAAA\n-----END PRIVATE KEY-----\n"
    _refused_unopened(_register(sign_in("mallory@evil.test"), idp_cert, {"privateKey": pem}), key_loads)


def test_a_key_encrypted_the_way_openssl_and_cryptography_do_is_accepted(sign_in, idp_cert):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"pw"))
    response = _register(sign_in("mallory@evil.test"), idp_cert, {"privateKey": key.decode(), "privateKeyPass": "pw"})
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("options", [["-v2", "aes-256-cbc"], ["-scrypt"], ["-v1", "PBE-SHA1-3DES"]],
                         ids=["pbkdf2", "scrypt", "pbes1"])
def test_openssl_default_encryptions_are_accepted(sign_in, idp_cert, tmp_path, options):
    plain = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (tmp_path / "plain.pem").write_bytes(plain)
    encrypted = subprocess.run(["openssl", "pkcs8", "-topk8", "-in", str(tmp_path / "plain.pem"), *options,
                                "-passout", "pass:pw"], check=True, capture_output=True, text=True).stdout
    response = _register(sign_in("mallory@evil.test"), idp_cert, {"privateKey": encrypted, "privateKeyPass": "pw"})
    assert response.status_code == 200, response.content


def test_a_costly_key_stored_before_the_check_makes_sign_in_a_clean_400_unopened(sign_in, idp_cert, key_loads):
    assert _register(sign_in("mallory@evil.test"), idp_cert, {}, authnRequestsSigned=False).status_code == 200
    provider = SsoProvider.objects.get(provider_id="evil")
    provider.saml_config = {**provider.saml_config, "authnRequestsSigned": True,
                            "spMetadata": {"privateKey": _pbkdf2(2**31 - 1), "privateKeyPass": "pw"}}
    provider.domain_verified = True
    provider.save()
    response = ApiClient().api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/dashboard"})
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "SAML_CONFIG_INVALID"
    assert key_loads == []


def test_parameters_nested_thousands_deep_are_a_clean_400(sign_in, idp_cert, key_loads):
    nested = _der(0x04, b"s" * 8)
    for _ in range(5000):
        nested = _seq(nested)
    response = _register(sign_in("mallory@evil.test"), idp_cert, {"privateKey": _encrypted_pem(nested)})
    _refused_unopened(response, key_loads)
