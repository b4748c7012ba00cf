"""SAML Single Logout, attack pass 14: an SP key that registration accepts crashes the SLO service (I4).

``/sso/register`` accepts an EC private key as ``spMetadata.privateKey`` (sso.saml.validation bounds EC
keys to P-256/384/521, so they are meant to be usable). ``sso.saml.slo_outbound`` signs our logout
messages with ``settings.signature_algorithm``, RSA-SHA256 by default, and catches only
``config.ConfigError``: libxmlsec1's ``xmlsec.InternalError: inappropriate key type`` escapes, a 500.

Anyone can register a provider and run its IdP, so the attacker registers one with an EC key and sends
a LogoutRequest signed by their own IdP (or any unsigned one where wantLogoutRequestSigned is off): an
anonymous 500 on demand, and for a legitimate customer with an EC key, Single Logout that never works.

Fix at the mechanism: decide once, when the provider is registered or updated, whether its SP key can
sign with its signatureAlgorithm (key type matches the algorithm family, and the algorithm is one our
signers produce: RSA only, since pysaml2 signs AuthnRequests with RSA only; refuse with
SAML_CONFIG_INVALID otherwise), and have the outbound signer turn any libxmlsec1 signing error into
ConfigError (400 SAML_CONFIG_INVALID), never an unhandled exception.
"""

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.conftest import ORIGIN, ApiClient
from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    IDP_ORIGIN,
    POST,
    REDIRECT,
    Message,
    configure_sso,
    get_slo,
    idp_entity,
    make_provider,
    post_form,
    post_slo,
    redirect_query,
    slo_keys,
    slo_on,
    slo_url,
)
from tests.sso.conftest import sign_in  # noqa: F401 - fixture

ECDSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
RSA = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"


def _ec_key():
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _register(owner, idp_key, binding):
    response = owner.api_post("/sso/register", {
        "providerId": "evil", "issuer": f"{ORIGIN}/sp/evil", "domain": "evil.test",
        "samlConfig": {"entryPoint": f"{IDP_ORIGIN}/evil/sso", "cert": idp_key.cert_pem,
                       "idpMetadata": {"entityID": idp_entity("evil"), "singleLogoutService": [
                           {"Binding": binding, "Location": f"{IDP_ORIGIN}/evil/slo"}]},
                       "spMetadata": {"privateKey": _ec_key()}}})
    return response


def test_an_ec_sp_key_accepted_at_register_is_not_a_500_at_the_slo_service_redirect(slo_on, sign_in, slo_keys):
    """I4 (errors are 400s, never 500s): the provider registers fine with an EC key; the attacker's IdP's
    signed HTTP-Redirect LogoutRequest makes us sign our LogoutResponse with RSA-SHA256 and an EC key."""
    owner = sign_in("mallory@evil.test")
    registered = _register(owner, slo_keys["other"], REDIRECT)
    if registered.status_code == 400:
        return  # refused at registration: fixed at the mechanism
    assert registered.status_code == 200, registered.content
    message = Message(issuer=idp_entity("evil"), destination=slo_url("evil"), name_id="mallory@evil.test")
    response = get_slo("evil", redirect_query(message, slo_keys["other"]))
    assert response.status_code != 500, response.content


def test_an_ec_sp_key_accepted_at_register_is_not_a_500_at_the_slo_service_post(slo_on, sign_in, slo_keys, tmp_path):
    """Same through HTTP-POST: the enveloped signature of our LogoutResponse fails inside libxmlsec1."""
    owner = sign_in("mallory@evil.test")
    registered = _register(owner, slo_keys["other"], POST)
    if registered.status_code == 400:
        return
    assert registered.status_code == 200, registered.content
    message = Message(issuer=idp_entity("evil"), destination=slo_url("evil"), name_id="mallory@evil.test")
    response = post_slo("evil", post_form(message, slo_keys["other"], tmp_path))
    assert response.status_code != 500, response.content


def test_an_ec_sp_key_accepted_at_register_is_not_a_500_at_sp_initiated_logout(slo_on, sign_in, make_user, slo_keys):
    """Same, SP-initiated: a user of that provider calls POST /sso/saml2/logout/evil; signing our
    LogoutRequest raises inside libxmlsec1. Documented errors of this route are 400s that keep the session."""
    from sso.models import SsoProvider  # noqa: PLC0415
    from tests.security.saml_slo_support import alive, saml_signed_in  # noqa: PLC0415

    owner = sign_in("owner@evil.test")
    registered = _register(owner, slo_keys["other"], REDIRECT)
    if registered.status_code == 400:
        return
    assert registered.status_code == 200, registered.content
    user = saml_signed_in(make_user, SsoProvider.objects.get(provider_id="evil"), "m@evil.test", "_m")
    response = user.api_post("/sso/saml2/logout/evil", {"callbackURL": "/bye"})
    assert response.status_code != 500, response.content
    if response.status_code == 400:
        assert alive(user)


# --- the mechanism: refused at register/update, and a stored mismatch is a clean 400 at every signer ------
def test_an_ec_sp_key_with_an_rsa_signature_algorithm_is_refused_at_register(slo_on, sign_in, slo_keys):
    """The key's type must be the signatureAlgorithm's (RSA-SHA256 by default): SAML_CONFIG_INVALID."""
    from sso.models import SsoProvider  # noqa: PLC0415

    response = _register(sign_in("mallory@evil.test"), slo_keys["other"], REDIRECT)
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "SAML_CONFIG_INVALID"
    assert not SsoProvider.objects.filter(provider_id="evil").exists()


def test_an_ec_key_with_an_ecdsa_algorithm_is_refused_at_register(slo_on, sign_in, slo_keys):
    """Types agree, but nothing here signs with ECDSA (pysaml2's AuthnRequest signer and our logout
    signer are RSA only): refused up front rather than a 400 at the first signed sign-in or logout."""
    from sso.models import SsoProvider  # noqa: PLC0415

    owner = sign_in("mallory@evil.test")
    config = {"entryPoint": f"{IDP_ORIGIN}/evil/sso", "cert": slo_keys["other"].cert_pem,
              "idpMetadata": {"entityID": idp_entity("evil")}, "spMetadata": {"privateKey": _ec_key()},
              "signatureAlgorithm": ECDSA_SHA256}
    response = owner.api_post("/sso/register", {"providerId": "evil", "issuer": f"{ORIGIN}/sp/evil",
                                                "domain": "evil.test", "samlConfig": config})
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "SAML_CONFIG_INVALID"
    assert "RSA keys only" in response.json()["message"]
    assert not SsoProvider.objects.filter(provider_id="evil").exists()


def test_an_ec_key_with_an_ecdsa_algorithm_given_at_update_is_refused(slo_on, sign_in, slo_keys):
    """The update path: a provider registered without an SP key, then given an EC key and ecdsa-sha256."""
    from sso.models import SsoProvider  # noqa: PLC0415

    owner = sign_in("mallory@evil.test")
    config = {"entryPoint": f"{IDP_ORIGIN}/evil/sso", "cert": slo_keys["other"].cert_pem,
              "idpMetadata": {"entityID": idp_entity("evil")}}
    registered = owner.api_post("/sso/register", {"providerId": "evil", "issuer": f"{ORIGIN}/sp/evil",
                                                  "domain": "evil.test", "samlConfig": config})
    assert registered.status_code == 200, registered.content
    update = owner.api_post("/sso/update-provider", {"providerId": "evil", "samlConfig": {
        "spMetadata": {"privateKey": _ec_key()}, "signatureAlgorithm": ECDSA_SHA256}})
    assert update.status_code == 400, update.content
    assert update.json()["code"] == "SAML_CONFIG_INVALID"
    assert "privateKey" not in (SsoProvider.objects.get(provider_id="evil").saml_config.get("spMetadata") or {})


def test_an_ecdsa_algorithm_given_to_an_rsa_key_at_update_is_refused(slo_on, sign_in, slo_keys):
    """The other mismatch at update: a working RSA key, then signatureAlgorithm set to ecdsa-sha256."""
    owner = sign_in("mallory@evil.test")
    config = {"entryPoint": f"{IDP_ORIGIN}/evil/sso", "cert": slo_keys["other"].cert_pem,
              "idpMetadata": {"entityID": idp_entity("evil")},
              "spMetadata": {"privateKey": slo_keys["sp"].key_path.read_text()}}
    registered = owner.api_post("/sso/register", {"providerId": "evil", "issuer": f"{ORIGIN}/sp/evil",
                                                  "domain": "evil.test", "samlConfig": config})
    assert registered.status_code == 200, registered.content
    update = owner.api_post("/sso/update-provider", {"providerId": "evil",
                                                     "samlConfig": {"signatureAlgorithm": ECDSA_SHA256}})
    assert update.status_code == 400, update.content
    assert update.json()["code"] == "SAML_CONFIG_INVALID"


@pytest.fixture
def stored_ec(slo_on, make_user, slo_keys):
    """A provider stored with an EC SP key before registration compared key and algorithm types."""
    from sso.models import SsoProvider  # noqa: PLC0415

    provider = make_provider(make_user(email="mallory@evil.test"), "evil", "evil.test", slo_keys["other"],
                             slo_keys["sp"], authnRequestsSigned=True)
    provider.saml_config = {**provider.saml_config, "spMetadata": {"privateKey": _ec_key()}}
    provider.save()
    return SsoProvider.objects.get(pk=provider.pk)


@pytest.mark.parametrize("binding", ["redirect", "post"])
def test_a_stored_ec_key_answers_the_idps_logout_request_with_a_clean_400(stored_ec, slo_keys, tmp_path, binding):
    message = Message(issuer=idp_entity("evil"), destination=slo_url("evil"), name_id="mallory@evil.test")
    response = (get_slo("evil", redirect_query(message, slo_keys["other"])) if binding == "redirect"
                else post_slo("evil", post_form(message, slo_keys["other"], tmp_path)))
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "SAML_CONFIG_INVALID"


def test_a_stored_ec_key_makes_a_signed_authn_request_a_clean_400(stored_ec):
    """AuthnRequest signing shares the check: pysaml2 would raise a TypeError (a 500) with an EC key."""
    response = ApiClient().api_post("/sign-in/sso", {"providerId": "evil", "callbackURL": "/dashboard"})
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "SAML_CONFIG_INVALID"
