"""SAML sign-in end to end against a real IdP (npm samlify): SP- and IdP-initiated, every signing shape,
an encrypted assertion, attribute mapping, provisioning and organization membership (sso.md §5, §6, §8)."""

import base64
import re

import pytest
from django.contrib.auth import get_user_model
from django.dispatch import receiver

from authservice.models import Account
from sso import signals
from sso.models import Member
from tests.conftest import ORIGIN
from tests.sso.saml.conftest import post_acs, session_user, user_for

RESPONSE_SIGNATURE = "<ds:Signature"
SIGNATURE = re.compile(r"<ds:Signature[\s>]")


def _decoded(form):
    return base64.b64decode(form.saml_response).decode()


def _signatures(xml):
    return len(SIGNATURE.findall(xml))


def _sign_in(provider, browser, user=None):
    form = provider.idp_response(browser, user or user_for())
    response = post_acs(browser, provider.provider_id, form.saml_response, form.relay_state)
    return form, response


def _assert_signed_in(browser, response, email="ada@acme.com", location="/dashboard"):
    assert response.status_code == 302, response.content
    assert response["Location"] == location
    assert session_user(browser)["email"] == email
    assert response.cookies["auth.relay_state"]["max-age"] == 0


def test_signed_assertion_only_signs_the_user_in(saml_provider, browser):
    provider = saml_provider("acme-saml", want_assertions_signed=True)
    form, response = _sign_in(provider, browser)
    xml = _decoded(form)
    assert _signatures(xml) == 1 and xml.index(RESPONSE_SIGNATURE) > xml.index("<saml:Assertion")
    _assert_signed_in(browser, response)


def test_signed_response_only_signs_the_user_in(saml_provider, browser):
    provider = saml_provider("acme-resp", want_assertions_signed=False)
    form, response = _sign_in(provider, browser)
    xml = _decoded(form)
    assert _signatures(xml) == 1 and xml.index(RESPONSE_SIGNATURE) < xml.index("<saml:Assertion")
    _assert_signed_in(browser, response)


def test_signed_response_and_signed_assertion_sign_the_user_in(saml_provider, browser):
    provider = saml_provider("acme-both", want_assertions_signed=True, message_signed=True)
    form, response = _sign_in(provider, browser)
    assert _signatures(_decoded(form)) == 2
    _assert_signed_in(browser, response)


def test_an_encrypted_assertion_is_decrypted_with_the_sp_key(saml_provider, browser):
    provider = saml_provider("acme-enc", want_assertions_signed=True, encrypt=True)
    form, response = _sign_in(provider, browser)
    xml = _decoded(form)
    assert "EncryptedAssertion" in xml and "ada@acme.com" not in xml
    _assert_signed_in(browser, response)


def test_an_encrypted_assertion_in_a_signed_response_signs_the_user_in(saml_provider, browser):
    provider = saml_provider("acme-enc-resp", want_assertions_signed=False, encrypt=True)
    form, response = _sign_in(provider, browser)
    assert "EncryptedAssertion" in _decoded(form)
    _assert_signed_in(browser, response)


def test_the_better_auth_acs_path_is_an_alias(saml_provider, browser):
    provider = saml_provider("acme-saml")
    form = provider.idp_response(browser, user_for())
    response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state, alias=True)
    _assert_signed_in(browser, response)


def test_a_new_user_and_a_saml_account_keyed_on_the_name_id_are_created(saml_provider, browser):
    provider = saml_provider("acme-saml")
    _, response = _sign_in(provider, browser, user_for("Ada@Acme.com", nameId="ada-nameid-42"))
    assert response.status_code == 302
    user = get_user_model().objects.get(email="ada@acme.com")
    assert user.name == "Ada Lovelace"
    assert user.email_verified is False
    account = Account.objects.get(user=user)
    assert (account.provider_id, account.account_id) == ("acme-saml", "ada-nameid-42")
    assert account.access_token is None and account.id_token is None


def test_a_second_sign_in_reuses_the_user_and_account(saml_provider, browser):
    provider = saml_provider("acme-saml")
    _sign_in(provider, browser)
    other_browser = type(browser)()
    _, response = _sign_in(provider, other_browser)
    _assert_signed_in(other_browser, response)
    assert get_user_model().objects.filter(email="ada@acme.com").count() == 1
    assert Account.objects.filter(provider_id="acme-saml").count() == 1


def test_the_success_redirect_goes_to_the_relay_state_callback_url(saml_provider, browser):
    provider = saml_provider("acme-saml")
    form = provider.idp_response(browser, user_for(), callback_url=f"{ORIGIN}/app?tab=1")
    response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    assert response["Location"] == f"{ORIGIN}/app?tab=1"


# --- IdP-initiated ------------------------------------------------------------------------------
def test_idp_initiated_sign_in_works_when_allowed(saml_provider, browser, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True})
    provider = saml_provider("acme-saml", callbackUrl="/after-saml")
    form = provider.idp_initiated(user_for())
    assert "InResponseTo" not in _decoded(form)
    response = post_acs(browser, "acme-saml", form.saml_response, form.relay_state)
    _assert_signed_in(browser, response, location="/after-saml")


def test_idp_initiated_sign_in_prefers_the_idp_initiated_callback_url(saml_provider, browser, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True})
    provider = saml_provider("acme-saml", callbackUrl="/after-saml", idpInitiatedCallbackUrl="/idp-landing")
    form = provider.idp_initiated(user_for())
    assert post_acs(browser, "acme-saml", form.saml_response)["Location"] == "/idp-landing"


def test_idp_initiated_sign_in_falls_back_to_the_app_origin(saml_provider, browser, configure_sso):
    configure_sso(saml={"allow_idp_initiated": True})
    provider = saml_provider("acme-saml")
    form = provider.idp_initiated(user_for())
    response = post_acs(browser, "acme-saml", form.saml_response)
    _assert_signed_in(browser, response, location=ORIGIN)


def test_idp_initiated_sign_in_is_refused_by_default(saml_provider, browser):
    provider = saml_provider("acme-saml")
    form = provider.idp_initiated(user_for())
    response = post_acs(browser, "acme-saml", form.saml_response)
    assert response.status_code == 302
    assert response["Location"] == (f"{ORIGIN}/?error=unsolicited_response"
                                    "&error_description=IdP-initiated+SSO+not+allowed")
    assert session_user(browser) is None
    assert not get_user_model().objects.filter(email="ada@acme.com").exists()


# --- attribute mapping ----------------------------------------------------------------------------
@pytest.mark.parametrize("attributes, email, name", [
    ({"mail": "Grace@Acme.com", "givenName": "Grace", "sn": "Hopper"}, "grace@acme.com", "Grace Hopper"),
    ({"emailAddress": "grace@acme.com", "firstName": "Grace", "lastName": "Hopper"}, "grace@acme.com",
     "Grace Hopper"),
    ({"urn:oid:0.9.2342.19200300.100.1.3": "grace@acme.com", "urn:oid:2.5.4.42": "Grace",
      "urn:oid:2.5.4.4": "Hopper"}, "grace@acme.com", "Grace Hopper"),
    ({"mail": "grace@acme.com", "cn": "Grace B. Hopper"}, "grace@acme.com", "Grace B. Hopper"),
    ({"mail": "grace@acme.com", "urn:oid:2.16.840.1.113730.3.1.241": "Admiral Hopper"}, "grace@acme.com",
     "Admiral Hopper"),
    ({}, "nameid@acme.com", "nameid@acme.com"),
])
def test_attributes_real_idps_send_are_recognised(saml_provider, browser, attributes, email, name):
    provider = saml_provider("acme-map", mapping={"email": "", "name": ""})
    _, response = _sign_in(provider, browser, {"email": "nameid@acme.com", "attributes": attributes})
    assert response.status_code == 302, response["Location"]
    user = get_user_model().objects.get(email=email)
    assert user.name == name


def test_the_mapping_names_the_attributes_to_use(saml_provider, browser):
    provider = saml_provider("acme-map", mapping={"email": "corpMail", "name": "fullName"})
    user = {"email": "nameid@acme.com",
            "attributes": {"corpMail": "Mapped@Acme.com", "fullName": "Mapped Name", "mail": "other@acme.com"}}
    _, response = _sign_in(provider, browser, user)
    assert response.status_code == 302
    assert get_user_model().objects.get(email="mapped@acme.com").name == "Mapped Name"


def test_provision_user_receives_the_raw_attributes_and_extra_fields(saml_provider, browser):
    seen = []

    @receiver(signals.user_provisioned, weak=False)
    def capture(sender, **kwargs):
        seen.append(kwargs)

    try:
        provider = saml_provider("acme-map", mapping={"email": "email", "name": "displayName",
                                                      "extraFields": {"department": "dept"}})
        user = {"email": "ada@acme.com", "attributes": {"email": "ada@acme.com", "dept": "Engineering",
                                                        "groups": ["eng", "admins"]}}
        _sign_in(provider, browser, user)
    finally:
        signals.user_provisioned.disconnect(capture)
    [call] = seen
    info = call["user_info"]
    assert info["id"] == "ada@acme.com" and info["email"] == "ada@acme.com"
    assert info["department"] == "Engineering"
    assert info["attributes"] == {"email": "ada@acme.com", "dept": "Engineering", "groups": ["eng", "admins"]}
    assert call["token"] is None and call["is_new_user"] is True
    assert call["provider"].provider_id == "acme-map"


def test_a_provider_of_an_organization_adds_the_user_as_member(saml_provider, saml_owner, browser):
    organization = saml_owner.api_post("/organization/create", {"name": "Acme", "slug": "acme"}).json()
    provider = saml_provider("acme-org", organization_id=organization["id"])
    _, response = _sign_in(provider, browser)
    assert response.status_code == 302
    member = Member.objects.get(organization_id=organization["id"], user__email="ada@acme.com")
    assert member.role == "member"
