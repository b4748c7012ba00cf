"""I6: an SP private key costs its validation once per process, and its size is bounded.

Loading an RSA private key validates it (primality checks growing steeply with the size: seconds at
8192 bits), and anonymous requests (POST /sign-in/sso, the ACS) sign or decrypt with the provider's
SP keys. Keys are refused at register and update over RSA 4096 bits or off P-256/384/521, and the
hot path loads each key once per process. Loads are counted, not timed.
"""
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from sso.models import SsoProvider
from tests.conftest import ORIGIN, ApiClient, error_of
from tests.sso.saml import idp_signer
from tests.sso.saml.conftest import saml_owner  # noqa: F401

pytestmark = pytest.mark.django_db


def _pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@pytest.fixture(scope="module")
def idp(tmp_path_factory):
    return idp_signer.make_keypair(tmp_path_factory.mktemp("key-cost"), "idp")


@pytest.fixture(scope="module")
def rsa_4104():
    return _pem(rsa.generate_private_key(public_exponent=65537, key_size=4104))


@pytest.fixture
def key_loads(monkeypatch):
    """Every private key parsed from PEM in this process (ours and pysaml2's call this one)."""
    calls = []
    real = serialization.load_pem_private_key

    def counted(*args, **kwargs):
        calls.append(kwargs.get("unsafe_skip_rsa_key_validation", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(serialization, "load_pem_private_key", counted)
    return calls


def _register(client, idp, sp):
    return client.api_post("/sso/register", {
        "providerId": "acme-saml", "issuer": f"{ORIGIN}/saml/acme-saml", "domain": "acme.com",
        "samlConfig": {"entryPoint": "https://idp.acme.com/sso", "cert": idp.cert_pem,
                       "idpMetadata": {"entityID": "https://idp.acme.com/entity"}, "spMetadata": sp}})


def _refused(response):
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "SAML_CONFIG_INVALID"
    assert not SsoProvider.objects.exists()


def test_an_rsa_signing_key_over_4096_bits_is_refused_at_registration(saml_owner, idp, rsa_4104):  # noqa: F811
    _refused(_register(saml_owner, idp, {"privateKey": rsa_4104}))


def test_an_rsa_encryption_key_over_4096_bits_is_refused_at_registration(saml_owner, idp, rsa_4104):  # noqa: F811
    _refused(_register(saml_owner, idp, {"encPrivateKey": rsa_4104}))


def test_an_ec_key_off_the_nist_curves_is_refused_at_registration(saml_owner, idp):  # noqa: F811
    _refused(_register(saml_owner, idp, {"privateKey": _pem(ec.generate_private_key(ec.SECP256K1()))}))


def test_an_ed25519_key_is_refused_at_registration(saml_owner, idp):  # noqa: F811
    _refused(_register(saml_owner, idp, {"privateKey": _pem(ed25519.Ed25519PrivateKey.generate())}))


def test_an_oversized_key_is_refused_at_update_too(saml_owner, idp, rsa_4104):  # noqa: F811
    assert _register(saml_owner, idp, {}).status_code == 200
    response = saml_owner.api_post("/sso/update-provider", {
        "providerId": "acme-saml", "samlConfig": {"spMetadata": {"encPrivateKey": rsa_4104}}})
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "SAML_CONFIG_INVALID"


def test_an_ec_p256_key_passes_the_size_bound(saml_owner, idp):  # noqa: F811
    """Within the size bound: what refuses it as a signing key is that nothing here signs with ECDSA
    (tests/security/test_attack14_slo_sp_key.py), not its curve or size."""
    key = _pem(ec.generate_private_key(ec.SECP256R1()))
    response = saml_owner.api_post("/sso/register", {
        "providerId": "acme-saml", "issuer": f"{ORIGIN}/saml/acme-saml", "domain": "acme.com",
        "samlConfig": {"entryPoint": "https://idp.acme.com/sso", "cert": idp.cert_pem,
                       "idpMetadata": {"entityID": "https://idp.acme.com/entity"}, "spMetadata": {"privateKey": key},
                       "signatureAlgorithm": "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"}})
    assert response.status_code == 400, response.content
    message = error_of(response)["message"]
    assert "RSA keys only" in message and "P-256" not in message


def test_an_anonymous_sign_in_start_does_not_load_the_signing_key_again(make_user, idp, tmp_path, key_loads):
    sp = idp_signer.make_keypair(tmp_path, "sp")
    owner = make_user(email="eve@evil.test", email_verified=True)
    entity = f"{ORIGIN}/sp/evil"
    SsoProvider.objects.create(
        provider_id="evil", issuer=entity, domain="evil.test", user=owner, domain_verified=True,
        saml_config={"issuer": entity, "entryPoint": "https://idp.evil.test/sso", "cert": idp.cert_pem,
                     "idpMetadata": {"entityID": "https://idp.evil.test/e"}, "authnRequestsSigned": True,
                     "spMetadata": {"privateKey": sp.key_path.read_text(), "signingCert": sp.cert_pem}})
    anonymous = ApiClient()
    first = anonymous.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/"}, REMOTE_ADDR="198.51.100.1")
    assert first.status_code == 200, first.content
    assert "Signature=" in first.json()["url"]
    del key_loads[:]

    for index in range(3):
        response = anonymous.api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/"},
                                      REMOTE_ADDR=f"198.51.100.{index + 2}")
        assert response.status_code == 200, response.content
        assert "Signature=" in response.json()["url"]

    assert key_loads == []
