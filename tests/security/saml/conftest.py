"""Fixtures of the SAML attack suite: one IdP key pair made by the xmlsec1 binary, and the provider
``acme`` of the victim's company, verified for acme.com, trusting that key."""

import pytest

from sso.models import SsoProvider
from tests.security.saml import corpus
from tests.sso.conftest import configure_sso  # noqa: F401 - fixture
from tests.sso.saml import idp_signer


@pytest.fixture(scope="session")
def idp_key(tmp_path_factory):
    idp_signer.require_binaries()
    return idp_signer.make_keypair(tmp_path_factory.mktemp("attack-keys"), "idp")


@pytest.fixture
def acme(make_user, idp_key):
    owner = make_user(email="owner@acme.com")
    return SsoProvider.objects.create(
        provider_id="acme", issuer=corpus.sp_entity("acme"), domain="acme.com", user=owner, domain_verified=True,
        saml_config={"issuer": corpus.sp_entity("acme"), "entryPoint": corpus.IDP_SSO, "cert": idp_key.cert_pem,
                     "idpMetadata": {"entityID": corpus.IDP_ENTITY}})
