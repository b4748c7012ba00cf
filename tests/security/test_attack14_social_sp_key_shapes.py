"""SAML SP signing keys, attack pass 14: get a key stored that register and update-provider refuse.

EC (and DSA, Ed25519) SP signing keys are refused at /sso/register and /sso/update-provider with
SAML_CONFIG_INVALID, because nothing here signs with them. The attacker is any signed-up user who
registers a provider of their own; they shape the key (encrypted, several PEM blocks, odd types, a
certificate of another key) so that the check and the signer read different things, then make the
sign-in start, the SP metadata or Single Logout fail with a 500.

Hole found: the check read an encrypted key with the password stored *next to it*
(``spMetadata.privateKeyPass``), while the signer takes ``spMetadata.privateKeyPass or
privateKeyPass`` (sso.saml.config.Settings). An EC key encrypted under a top-level ``privateKeyPass``
did not load for the check, was "left to its first use", and was stored. The check now tries every
password a reader of that key would use, so what is checked is what is used.
"""

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, rsa

from sso.models import SsoProvider
from tests.conftest import BASE, ORIGIN, ApiClient
from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    IDP_ORIGIN,
    REDIRECT,
    Message,
    configure_sso,
    get_slo,
    idp_entity,
    redirect_query,
    slo_keys,
    slo_on,
    slo_url,
)
from tests.sso.conftest import sign_in  # noqa: F401 - fixture

PASSWORD = b"correct horse"


def _pem(key, password=None, form=serialization.PrivateFormat.PKCS8):
    encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(serialization.Encoding.PEM, form, encryption).decode()


def _ec():
    return ec.generate_private_key(ec.SECP256R1())


def _config(slo_keys, sp, **extra):
    return {"entryPoint": f"{IDP_ORIGIN}/evil/sso", "cert": slo_keys["other"].cert_pem,
            "idpMetadata": {"entityID": idp_entity("evil"),
                            "singleLogoutService": [{"Binding": REDIRECT, "Location": f"{IDP_ORIGIN}/evil/slo"}]},
            "spMetadata": sp, **extra}


def _register(owner, config):
    return owner.api_post("/sso/register", {"providerId": "evil", "issuer": f"{ORIGIN}/sp/evil",
                                            "domain": "evil.test", "samlConfig": config})


def _verify_domain():
    """The attacker's own domain, verified (they control its DNS): sign-in is open."""
    provider = SsoProvider.objects.get(provider_id="evil")
    provider.domain_verified = True  # the summary flag written directly marks every row verified
    provider.save()


def _refused(response):
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "SAML_CONFIG_INVALID"


@pytest.fixture
def owner(slo_on, sign_in):
    return sign_in("mallory@evil.test")


# --- encrypted keys: the check must read the key with the password the signer will use -------------------
def test_an_ec_key_encrypted_under_the_top_level_password_is_refused_at_register(owner, slo_keys):
    config = _config(slo_keys, {"privateKey": _pem(_ec(), PASSWORD)}, privateKeyPass=PASSWORD.decode())
    _refused(_register(owner, config))
    assert not SsoProvider.objects.filter(provider_id="evil").exists()


def test_a_traditional_ec_key_encrypted_under_the_top_level_password_is_refused_at_register(owner, slo_keys):
    key = _pem(_ec(), PASSWORD, serialization.PrivateFormat.TraditionalOpenSSL)
    _refused(_register(owner, _config(slo_keys, {"privateKey": key}, privateKeyPass=PASSWORD.decode())))


def test_a_top_level_ec_key_encrypted_under_the_sp_password_is_refused_at_register(owner, slo_keys):
    config = _config(slo_keys, {"privateKeyPass": PASSWORD.decode()}, privateKey=_pem(_ec(), PASSWORD))
    _refused(_register(owner, config))


def test_an_ec_key_encrypted_under_the_top_level_password_is_refused_at_update(owner, slo_keys):
    assert _register(owner, _config(slo_keys, {})).status_code == 200
    response = owner.api_post("/sso/update-provider", {"providerId": "evil", "samlConfig": {
        "spMetadata": {"privateKey": _pem(_ec(), PASSWORD)}, "privateKeyPass": PASSWORD.decode()}})
    _refused(response)
    assert "privateKey" not in (SsoProvider.objects.get(provider_id="evil").saml_config.get("spMetadata") or {})


def test_a_top_level_password_added_later_to_unlock_a_stored_ec_key_is_refused(owner, slo_keys):
    """Two updates: first an encrypted EC key nobody can open (a key that does not load is left to its
    first use, a clean 400 there), then the password that opens it."""
    assert _register(owner, _config(slo_keys, {"privateKey": _pem(_ec(), PASSWORD)})).status_code == 200
    response = owner.api_post("/sso/update-provider", {"providerId": "evil",
                                                       "samlConfig": {"privateKeyPass": PASSWORD.decode()}})
    _refused(response)


def test_a_stored_key_that_does_not_load_makes_a_signed_sign_in_a_clean_400(owner, slo_keys):
    config = _config(slo_keys, {"privateKey": _pem(_ec(), PASSWORD), "privateKeyPass": "wrong"},
                     authnRequestsSigned=True)
    assert _register(owner, config).status_code == 200  # left to its first use
    _verify_domain()
    response = ApiClient().api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/dashboard"})
    _refused(response)


# --- odd key types and shapes ----------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: dsa.generate_private_key(2048), ed25519.Ed25519PrivateKey.generate],
                         ids=["dsa", "ed25519"])
def test_a_key_of_another_type_is_refused_at_register(owner, slo_keys, make):
    _refused(_register(owner, _config(slo_keys, {"privateKey": _pem(make())})))


def test_an_ec_key_hidden_after_text_before_the_pem_block_is_refused(owner, slo_keys):
    _refused(_register(owner, _config(slo_keys, {"privateKey": "a comment\n" + _pem(_ec())})))


def test_an_ec_key_first_in_a_pem_with_two_keys_is_refused(owner, slo_keys):
    key = _pem(_ec()) + _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    _refused(_register(owner, _config(slo_keys, {"privateKey": key})))


def test_an_rsa_key_first_in_a_pem_with_two_keys_signs_with_the_key_that_was_checked(owner, slo_keys):
    """The signer gets the re-serialised key that was loaded and checked, never the stored text."""
    key = _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)) + _pem(_ec())
    assert _register(owner, _config(slo_keys, {"privateKey": key}, authnRequestsSigned=True)).status_code == 200
    _verify_domain()
    response = ApiClient().api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/dashboard"})
    assert response.status_code == 200, response.content
    assert "Signature=" in response.json()["url"]


# --- an RSA key whose certificate is another key's: metadata, sign-in and logout stay up ------------------
@pytest.fixture
def mismatched(owner, slo_keys):
    sp = {"privateKey": _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)),
          "signingCert": slo_keys["sp"].cert_pem}
    assert _register(owner, _config(slo_keys, sp, authnRequestsSigned=True)).status_code == 200
    _verify_domain()


def test_a_certificate_of_another_key_does_not_break_the_sp_metadata(mismatched):
    response = ApiClient().get(f"{BASE}/sso/saml2/sp/metadata", {"providerId": "evil"})
    assert response.status_code == 200, response.content


def test_a_certificate_of_another_key_does_not_break_the_signed_sign_in(mismatched):
    response = ApiClient().api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/dashboard"})
    assert response.status_code in (200, 400), response.content


def test_a_certificate_of_another_key_does_not_break_single_logout(mismatched, slo_keys):
    message = Message(issuer=idp_entity("evil"), destination=slo_url("evil"), name_id="mallory@evil.test")
    response = get_slo("evil", redirect_query(message, slo_keys["other"]))
    assert response.status_code != 500, response.content


@pytest.mark.parametrize("password", [["pw"], {"pw": 1}, 123], ids=["list", "object", "number"])
def test_a_password_of_another_json_type_is_a_clean_answer(owner, slo_keys, password):
    response = _register(owner, _config(slo_keys, {"privateKey": _pem(_ec(), PASSWORD), "privateKeyPass": password},
                                        privateKeyPass=password))
    assert response.status_code in (200, 400), response.content
