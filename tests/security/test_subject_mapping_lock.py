"""I5 -> I1: the attribute that keys a SAML account (``samlConfig.mapping.id``) is part of the provider's
locked identity, and a configured key attribute that is missing refuses the assertion.

The attacker administers a SAML provider with linked users. Changing ``mapping.id`` to an attribute the
IdP's users edit themselves (``displayName``) would make eve's assertion (NameID eve@acme.test,
displayName = the victim's NameID) sign in as the victim. (OIDC accounts are always keyed by ``sub``:
``oidcConfig.mapping.id`` is not read, so there is nothing to lock there.)
"""
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from authservice.models import Account, Session
from sso.models import SsoProvider
from tests.conftest import BASE, ORIGIN, PASSWORD, ApiClient
from tests.sso.conftest import _sso_defaults  # noqa: F401 - fixture
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import Claims

pytestmark = pytest.mark.django_db

IDP_ENTITY = "https://idp.acme.test/entity"
SP_ENTITY = f"{ORIGIN}/sp/acme"
DISPLAY_NAME_KEY = {"id": "displayName", "email": "email", "name": "displayName"}


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    idp_signer.require_binaries()
    return idp_signer.make_keypair(tmp_path_factory.mktemp("idp"), "idp")


def _provider(owner, key, **extra):
    return SsoProvider.objects.create(
        provider_id="acme", issuer=SP_ENTITY, domain="acme.test", user=owner, domain_verified=True,
        saml_config={"issuer": SP_ENTITY, "entryPoint": "https://idp.acme.test/sso", "cert": key.cert_pem,
                     "idpMetadata": {"entityID": IDP_ENTITY}, **extra})


def _owner_client(owner):
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": owner.email, "password": PASSWORD}).status_code == 200
    return client


def _post_assertion(key, tmp_path, name_id, attributes):
    browser = ApiClient()
    started = browser.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard"})
    query = parse_qs(urlsplit(started.json()["url"]).query)
    claims = Claims(issuer=IDP_ENTITY, destination=f"{ORIGIN}{BASE}/sso/saml2/callback/acme", audience=SP_ENTITY,
                    in_response_to=idp_signer.request_id(query["SAMLRequest"][0]), name_id=name_id,
                    attributes=attributes)
    xml = idp_signer.sign(idp_signer.response_xml(claims), key, claims.response_id, tmp_path)
    return browser.post(f"{BASE}/sso/saml2/callback/acme",
                        urlencode({"SAMLResponse": idp_signer.encode(xml), "RelayState": query["RelayState"][0]}),
                        content_type="application/x-www-form-urlencoded")


def test_changing_the_account_key_attribute_while_accounts_are_linked_is_409(make_user, key):
    owner = make_user(email="owner@acme.test", email_verified=True)
    victim = make_user(email="victim@acme.test", email_verified=True)
    _provider(owner, key)
    Account.objects.create(user=victim, provider_id="acme", account_id="victim@acme.test")

    update = _owner_client(owner).api_post("/sso/update-provider", {
        "providerId": "acme", "samlConfig": {"mapping": DISPLAY_NAME_KEY}})

    assert update.status_code == 409, update.content
    assert update.json()["code"] == "PROVIDER_IDENTITY_LOCKED"
    assert "mapping" not in SsoProvider.objects.get().saml_config


def test_dropping_a_configured_account_key_attribute_while_linked_is_409(make_user, key):
    owner = make_user(email="owner@acme.test", email_verified=True)
    victim = make_user(email="victim@acme.test", email_verified=True)
    _provider(owner, key, mapping={"id": "uid", "email": "email", "name": "cn"})
    Account.objects.create(user=victim, provider_id="acme", account_id="victim")

    update = _owner_client(owner).api_post("/sso/update-provider", {
        "providerId": "acme", "samlConfig": {"mapping": {"email": "mail", "name": "cn"}}})

    assert update.status_code == 409, update.content


def test_other_mapping_fields_may_change_while_linked(make_user, key):
    owner = make_user(email="owner@acme.test", email_verified=True)
    victim = make_user(email="victim@acme.test", email_verified=True)
    _provider(owner, key)
    Account.objects.create(user=victim, provider_id="acme", account_id="victim@acme.test")

    update = _owner_client(owner).api_post("/sso/update-provider", {
        "providerId": "acme", "samlConfig": {"mapping": {"id": "nameID", "email": "mail", "name": "cn"}}})

    assert update.status_code == 200, update.content


def test_an_assertion_without_the_configured_key_attribute_is_refused(make_user, key, tmp_path):
    owner = make_user(email="owner@acme.test", email_verified=True)
    victim = make_user(email="victim@acme.test", email_verified=True)
    _provider(owner, key, mapping=DISPLAY_NAME_KEY)
    Account.objects.create(user=victim, provider_id="acme", account_id="victim@acme.test")

    # No displayName: the NameID (which names the victim) must not stand in for the configured key.
    _post_assertion(key, tmp_path, "victim@acme.test", {"email": "eve@acme.test"})

    assert not Session.objects.filter(user=victim).exists()
    assert Account.objects.filter(provider_id="acme").count() == 1


def test_the_configured_key_attribute_keys_the_account(make_user, key, tmp_path):
    owner = make_user(email="owner@acme.test", email_verified=True)
    _provider(owner, key, mapping=DISPLAY_NAME_KEY)

    _post_assertion(key, tmp_path, "transient-123", {"email": "eve@acme.test", "displayName": "eve-id"})

    assert Account.objects.get(provider_id="acme").account_id == "eve-id"
