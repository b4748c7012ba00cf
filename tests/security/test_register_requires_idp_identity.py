"""I2: a SAML provider always names its IdP, so something pins the Issuer of every response.

The finding (issue 12, "also found"): ``POST /sso/register`` accepted a ``samlConfig`` with neither
``idpMetadata.entityID`` nor metadata XML (nor a metadata URL, whose fetched document names the entity).
Then only the certificate bound responses to the provider, whatever Issuer they named. sso.md §2 marks
``idpMetadata`` as required: the answer is ``400 VALIDATION_ERROR`` in zod's wording for a missing
field, and nothing is stored. An ``idpMetadata`` naming neither stays ``SAML_IDP_ENTITY_ID_REQUIRED``.
"""

import pytest

from sso.models import SsoProvider
from tests.conftest import ORIGIN, error_of
from tests.sso.conftest import _sso_defaults, pem_cert, sign_in  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

MESSAGE = "[body.samlConfig.idpMetadata] Invalid input: expected record, received undefined"


def _body(cert, **config):
    return {"providerId": "no-idp", "issuer": f"{ORIGIN}/saml/no-idp", "domain": "acme.com",
            "samlConfig": {"entryPoint": "https://idp.acme.com/sso", "cert": cert, **config}}


def test_register_without_idp_metadata_is_a_validation_error(sign_in, pem_cert):
    response = sign_in().api_post("/sso/register", _body(pem_cert))
    assert response.status_code == 400, response.content
    assert error_of(response) == {"message": MESSAGE, "code": "VALIDATION_ERROR", "status": 400}
    assert not SsoProvider.objects.exists()


def test_register_with_only_sp_options_and_a_certificate_is_refused_too(sign_in, pem_cert):
    response = sign_in().api_post("/sso/register", _body(pem_cert, wantAssertionsSigned=True,
                                                         spMetadata={"entityID": "urn:acme:sp"}))
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert not SsoProvider.objects.exists()
