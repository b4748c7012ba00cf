"""I1: one subdomain's DNS zone cannot verify its parent domain (and then sign in as anyone there).

Domain ownership is proven by a TXT record at ``_auth-token-{providerId}.{domain}``. The record
name used to be built as text, so a providerId with a dot (``x.team``) or a backslash-escaped dot
made the record ``_auth-token-x.team.corp.test``: a name inside the zone ``team.corp.test``, whose
holder could then verify ``corp.test`` and have their IdP sign in as ``ceo@corp.test``. Now the
providerId must be one DNS label part (letters, digits, ``-``, ``_``) at registration, the record
name is built from labels (always a direct child of the domain being proven), and a stored id that
is not one label is refused at verify time without a lookup. DNS is a real server on a loopback port.
"""

import dns.name
import pytest
from django.db.models import QuerySet

from authservice.errors import APIError
from sso import domains
from sso.models import SsoProvider
from tests.conftest import error_of
from tests.sso.bodies import skip_discovery_body
from tests.sso.conftest import _sso_defaults, configure_sso, dns_server, sign_in  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

# (A NUL never gets this far: the input layer refuses it in any string, VALIDATION_ERROR.)
NOT_ONE_LABEL = ["x.team", "x\\.team", "x\\", "a b", "tab\there", "nl\nx", "del\x7fx", "sl/ash",
                 "ünïcode", "x."]


def register(client, provider_id, domain="corp.test"):
    return client.api_post("/sso/register", skip_discovery_body(provider_id=provider_id, domain=domain))


@pytest.mark.parametrize("provider_id", NOT_ONE_LABEL)
def test_registration_refuses_a_provider_id_that_is_not_one_dns_label(sign_in, provider_id):
    response = register(sign_in("mallory@team.corp.test"), provider_id)
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "INVALID_PROVIDER_ID"
    assert not SsoProvider.objects.exists()


@pytest.mark.parametrize("provider_id", ["acme", "Acme_SSO-2", "a", "okta-prod_eu"])
def test_registration_accepts_letters_digits_hyphens_and_underscores(sign_in, provider_id):
    assert register(sign_in(), provider_id).status_code == 200


def test_a_stored_dotted_provider_id_is_refused_at_verify_without_a_lookup(sign_in, dns_server):
    # A row stored before the rule (or by a direct insert) still cannot prove a parent domain.
    owner = sign_in("mallory@team.corp.test")
    assert register(owner, "x").status_code == 200
    # A plain QuerySet: SsoProvider's own refuses to change a saved provider_id (sso/models.py).
    QuerySet(SsoProvider).update(provider_id="x.team")
    token = domains.issue_token(SsoProvider.objects.get())
    dns_server.txt("_auth-token-x.team.corp.test", token)  # in the attacker's own zone
    response = owner.api_post("/sso/verify-domain", {"providerId": "x.team"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_PROVIDER_ID"
    assert dns_server.queries == []
    assert SsoProvider.objects.get().domain_verified is False


def test_the_record_name_is_always_a_direct_child_of_the_domain():
    name = domains.record_name("_auth-token-acme", "corp.test")
    assert name.parent() == dns.name.from_text("corp.test")
    assert name.labels[0] == b"_auth-token-acme"


def test_the_record_name_is_not_built_from_a_dotted_or_escaped_identifier():
    for ident in ("_auth-token-x.team", "_auth-token-x\\.team", "_auth-token-x\\"):
        with pytest.raises(APIError) as raised:
            domains.record_name(ident, "corp.test")
        assert (raised.value.status_code, raised.value.code) == (400, "INVALID_PROVIDER_ID")
