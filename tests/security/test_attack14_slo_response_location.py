"""SAML Single Logout, attack pass 14: ``idpMetadata.singleLogoutService[].ResponseLocation`` is stored
unchecked (I4: "Every URL we store, redirect to or return is https (or http) ... checked in the form in
which it will be used").

Single Logout added ``singleLogoutService`` to the JSON ``idpMetadata`` (better-auth's
``[{Binding, Location, ResponseLocation?}]``). ``sso.saml_config.check_locations`` checks each service's
``Location`` at register and update, but not its ``ResponseLocation``, although the SAML code sends the
browser there (``slo_config.Service.target(response=True)``: our LogoutResponse goes to ResponseLocation
when the IdP names one). The same attribute inside metadata XML *is* refused
(``sso.saml.metadata.URL_ATTRIBUTES = ("Location", "ResponseLocation")``): two paths, two rules.

Today the use site happens to drop a non-http(s) ResponseLocation (``slo_config.services``), so the
``javascript:`` URL is stored but not yet followed; any other reader of the stored config (an admin UI,
an export, a later code path) gets it as a trusted provider URL.

Fix at the mechanism: one list of URL-valued keys for the JSON services, shared with the metadata
checker (``Location`` and ``ResponseLocation``), so register/update refuse it with SAML_URL_INVALID.
"""

import pytest

from sso.models import SsoProvider
from tests.conftest import ORIGIN
from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    IDP_ORIGIN,
    POST,
    REDIRECT,
    configure_sso,
    idp_entity,
    slo_keys,
    slo_on,
)
from tests.sso.conftest import sign_in  # noqa: F401 - fixture


@pytest.mark.parametrize("location", ["javascript:alert(document.domain)", "data:text/html,<script>x</script>"])
@pytest.mark.parametrize("binding", [REDIRECT, POST])
def test_a_non_http_slo_response_location_is_refused_at_register(slo_on, sign_in, slo_keys, location, binding):
    """I4: a javascript:/data: ResponseLocation is accepted and stored (Location alone is checked)."""
    owner = sign_in("mallory@evil.test")
    response = owner.api_post("/sso/register", {
        "providerId": "evil", "issuer": f"{ORIGIN}/sp/evil", "domain": "evil.test",
        "samlConfig": {"entryPoint": f"{IDP_ORIGIN}/evil/sso", "cert": slo_keys["other"].cert_pem,
                       "idpMetadata": {"entityID": idp_entity("evil"), "singleLogoutService": [
                           {"Binding": binding, "Location": f"{IDP_ORIGIN}/evil/slo", "ResponseLocation": location}]}}})
    assert response.status_code == 400, (response.status_code, response.content[:200])
    assert response.json()["code"] == "SAML_URL_INVALID"
    assert not SsoProvider.objects.filter(provider_id="evil").exists()


def test_a_non_http_slo_response_location_is_refused_at_update(slo_on, sign_in, slo_keys):
    """I4, the update path: a provider registered cleanly then given a javascript: ResponseLocation."""
    owner = sign_in("mallory@evil.test")
    config = {"entryPoint": f"{IDP_ORIGIN}/evil/sso", "cert": slo_keys["other"].cert_pem,
              "idpMetadata": {"entityID": idp_entity("evil"), "singleLogoutService": [
                  {"Binding": REDIRECT, "Location": f"{IDP_ORIGIN}/evil/slo"}]}}
    registered = owner.api_post("/sso/register", {"providerId": "evil", "issuer": f"{ORIGIN}/sp/evil",
                                                  "domain": "evil.test", "samlConfig": config})
    assert registered.status_code == 200, registered.content
    services = [{"Binding": REDIRECT, "Location": f"{IDP_ORIGIN}/evil/slo", "ResponseLocation": "javascript:alert(1)"}]
    update = owner.api_post("/sso/update-provider", {
        "providerId": "evil",
        "samlConfig": {**config, "idpMetadata": {**config["idpMetadata"], "singleLogoutService": services}}})
    stored = SsoProvider.objects.get(provider_id="evil").saml_config["idpMetadata"].get("singleLogoutService")
    assert "javascript:alert(1)" not in repr(stored), (update.status_code, update.content[:200])
