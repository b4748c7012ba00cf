"""Django admin pages and the management commands of the sso app."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from sso.models import Member, Organization, SsoProvider

pytestmark = pytest.mark.django_db

SECRET = "super-secret-client-value"


@pytest.fixture
def provider(make_user):
    owner = make_user(email="owner@acme.com")
    return SsoProvider.objects.create(
        provider_id="acme", issuer="https://idp.acme.com", domain="acme.com", user=owner,
        oidc_config={"clientId": "client-1", "clientSecret": SECRET, "issuer": "https://idp.acme.com",
                     "tokenEndpoint": "https://idp.acme.com/token"})


def _form_data(provider, **changes):
    data = {"provider_id": provider.provider_id, "issuer": provider.issuer, "domain": provider.domain,
            "user": provider.user_id, "organization_id": "", "oidc_config":
            '{"clientId": "client-2", "issuer": "https://idp.acme.com"}', "client_secret": "", "saml_config": ""}
    data.update(changes)
    return data


def test_admin_pages_open_and_never_show_the_secret(admin_client, provider):
    org = Organization.objects.create(name="Acme", slug="acme")
    Member.objects.create(organization=org, user=provider.user, role="owner")
    for url in ("/admin/sso/ssoprovider/", f"/admin/sso/ssoprovider/{provider.pk}/change/",
                "/admin/sso/ssoprovider/add/", "/admin/sso/organization/",
                f"/admin/sso/organization/{org.pk}/change/", "/admin/sso/member/"):
        response = admin_client.get(url)
        assert response.status_code == 200, url
        assert SECRET not in response.content.decode()


def test_admin_edit_keeps_the_stored_secret_when_left_blank(admin_client, provider):
    response = admin_client.post(f"/admin/sso/ssoprovider/{provider.pk}/change/", _form_data(provider))
    assert response.status_code == 302, response.content.decode()[:2000]
    provider.refresh_from_db()
    assert provider.oidc_config["clientId"] == "client-2"
    assert provider.oidc_config["clientSecret"] == SECRET


def test_admin_edit_replaces_the_secret_when_given(admin_client, provider):
    admin_client.post(f"/admin/sso/ssoprovider/{provider.pk}/change/",
                      _form_data(provider, client_secret="rotated"))
    provider.refresh_from_db()
    assert provider.oidc_config["clientSecret"] == "rotated"


@pytest.mark.parametrize("changes", [
    {"oidc_config": "{not json"},
    {"oidc_config": "[1, 2]"},
    {"oidc_config": '{"issuer": "x"}'},
    {"oidc_config": "", "saml_config": '{"entryPoint": "https://idp/sso", "cert": "garbage"}'},
    {"oidc_config": '{"clientId": "c", "tokenEndpoint": "http://10.0.0.1/t"}'},
])
def test_admin_bad_config_is_a_form_error(admin_client, provider, changes):
    response = admin_client.post(f"/admin/sso/ssoprovider/{provider.pk}/change/", _form_data(provider, **changes))
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    provider.refresh_from_db()
    assert provider.oidc_config["clientId"] == "client-1"


def test_admin_rerun_discovery_action(admin_client, provider, idp):
    provider.issuer = idp.url
    provider.save()
    idp.discovery()
    response = admin_client.post("/admin/sso/ssoprovider/", {
        "action": "rerun_discovery", "_selected_action": [provider.pk]}, follow=True)
    assert response.status_code == 200
    provider.refresh_from_db()
    assert provider.oidc_config["tokenEndpoint"] == f"{idp.url}/token"
    assert provider.oidc_config["clientSecret"] == SECRET


def test_admin_check_domain_action_verifies(admin_client, provider, dns_server):
    from sso import domains

    token = domains.issue_token(provider)
    dns_server.txt("_auth-token-acme.acme.com", token)
    admin_client.post("/admin/sso/ssoprovider/", {"action": "check_domain_record",
                                                  "_selected_action": [provider.pk]}, follow=True)
    provider.refresh_from_db()
    assert provider.domain_verified is True


def test_sso_providers_command_lists_every_provider(provider, make_user):
    SsoProvider.objects.create(provider_id="beta", issuer="https://b", domain="b.com", user=provider.user,
                               saml_config={"entryPoint": "https://b/sso"}, domain_verified=True)
    out = io.StringIO()
    call_command("sso_providers", stdout=out)
    text = out.getvalue()
    assert "acme" in text and "beta" in text and "saml" in text
    assert "2 provider(s)" in text
    assert SECRET not in text


def test_sso_verify_domain_command(provider, dns_server):
    from sso import domains

    token = domains.issue_token(provider)
    with pytest.raises(CommandError, match="DOMAIN_VERIFICATION_FAILED"):
        call_command("sso_verify_domain", "acme", stdout=io.StringIO())
    dns_server.txt("_auth-token-acme.acme.com", token)
    out = io.StringIO()
    call_command("sso_verify_domain", "acme", stdout=out)
    assert "verified" in out.getvalue()
    provider.refresh_from_db()
    assert provider.domain_verified is True


def test_sso_verify_domain_command_unknown_provider(db):
    with pytest.raises(CommandError):
        call_command("sso_verify_domain", "nope", stdout=io.StringIO())



def test_a_saml_provider_page_shows_its_sp_metadata_url(admin_client, make_user, pem_cert):
    owner = make_user(email="saml-owner@acme.com")
    saml = SsoProvider.objects.create(
        provider_id="acme-saml", issuer="https://sp.acme.com", domain="acme.com", user=owner,
        saml_config={"entryPoint": "https://idp.acme.com/sso", "cert": pem_cert, "issuer": "https://sp.acme.com"})
    page = admin_client.get(f"/admin/sso/ssoprovider/{saml.pk}/change/").content.decode()
    assert "/api/auth/sso/saml2/sp/metadata?providerId=acme-saml&amp;format=xml" in page


def test_the_admin_refuses_saml_idp_metadata_that_is_not_xml(admin_client, provider, pem_cert):
    config = json.dumps({"entryPoint": "https://idp.acme.com/sso", "idpMetadata": {"metadata": "<not xml"}})
    response = admin_client.post(f"/admin/sso/ssoprovider/{provider.pk}/change/",
                                 _form_data(provider, oidc_config="", saml_config=config))
    assert response.status_code == 200  # the form again, with the error; nothing saved
    assert SsoProvider.objects.get(pk=provider.pk).saml_config is None


def test_sso_verify_domain_without_a_token_says_how_to_get_one(provider):
    from authservice.models import Verification

    Verification.objects.filter(identifier="_auth-token-acme").delete()
    with pytest.raises(CommandError, match="NO_PENDING_VERIFICATION") as raised:
        call_command("sso_verify_domain", "acme", stdout=io.StringIO())
    assert "sso_verify_domain acme --request-token" in str(raised.value)
    assert "/api/auth/sso/request-domain-verification" in str(raised.value)


def test_sso_verify_domain_request_token_prints_the_txt_record_to_publish(provider):
    from sso import domains

    out = io.StringIO()
    call_command("sso_verify_domain", "acme", "--request-token", stdout=out)
    assert f'_auth-token-acme.acme.com  TXT  "{domains.pending_token(provider)}"' in out.getvalue()
