"""A row whose provider_id the deployment claims for something else is unusable (I1; attack pass 14e).

Claims (sso/provider_claims.py): a configured social provider, account_linking.trusted_providers, the
built-in and better-auth social ids, a whole default_sso item. Every path that would use such a row,
its management endpoints included, answers 409 PROVIDER_ID_CONFLICT and logs an error for the operator;
sso.E019 names it; deleting it is the resolution, because a saved row's provider_id cannot change.
"""

import logging

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from authservice.models import Account
from sso import checks, domain_membership, provider_claims
from sso.admin import SsoProviderForm
from sso.models import Organization, SsoProvider
from sso.scim import tokens
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import authorize_params

pytestmark = pytest.mark.django_db

BASE = "/api/auth"
SOCIAL = {"type": "oidc", "issuer": "https://op.corp.example", "clientId": "c", "clientSecret": "s"}


def make_row(owner, provider_id="corp", **fields):
    fields.setdefault("oidc_config", {"clientId": "evil", "clientSecret": "evil-secret"})
    fields.setdefault("issuer", "https://idp.evil.com")
    fields.setdefault("domain", "evil.com")
    return SsoProvider.objects.create(provider_id=provider_id, domain_verified=True, user=owner, **fields)


@pytest.fixture
def owner(make_user):
    return make_user(email="mallory@evil.com")


@pytest.fixture
def claim_corp(configure):
    """The operator configures the generic OIDC social provider ``corp`` after the row took the id."""
    return lambda: configure(social_providers={"corp": SOCIAL})


def conflict(response):
    assert response.status_code == 409, response.content
    assert error_of(response)["code"] == "PROVIDER_ID_CONFLICT"
    return True


def start(api, **body):
    return api.api_post("/sign-in/sso", {"callbackURL": "/dashboard", "errorCallbackURL": "/oops", **body})


# --- provider_id is immutable ------------------------------------------------------------------------
def test_save_refuses_a_new_provider_id_on_every_write_path(owner):
    row = make_row(owner)
    row.provider_id = "corp-old"
    with pytest.raises(ValueError, match="cannot be changed"):
        row.save()
    with pytest.raises(ValueError, match="cannot be changed"):
        SsoProvider.objects.filter(pk=row.pk).update(provider_id="x")
    deferred = SsoProvider.objects.only("id").get(pk=row.pk)
    deferred.provider_id = "x"
    with pytest.raises(ValueError):
        deferred.save()
    with pytest.raises(ValueError):
        SsoProvider.objects.bulk_update([row], ["provider_id"])
    assert SsoProvider.objects.get(pk=row.pk).provider_id == "corp"
    fresh = SsoProvider.objects.get(pk=row.pk)
    fresh.issuer = "https://idp2.evil.com"
    fresh.save()  # other columns still change
    row.provider_id = "corp"
    row.save(update_fields=["issuer"])


def test_the_admin_change_form_shows_provider_id_read_only(owner, admin_client):
    row = make_row(owner)
    url = reverse("admin:sso_ssoprovider_change", args=[row.pk])
    assert 'name="provider_id"' not in admin_client.get(url).content.decode()
    assert 'name="provider_id"' in admin_client.get(reverse("admin:sso_ssoprovider_add")).content.decode()
    form = SsoProviderForm(instance=row, data={"provider_id": "corp-old", "issuer": row.issuer, "domain": row.domain,
                                               "user": owner.pk, "oidc_config": '{"clientId": "evil"}'})
    assert not form.is_valid() and "cannot be changed" in str(form.errors["provider_id"])


@pytest.mark.parametrize("provider_id", ["github", "credential", "corp", "linked-left", "bad.id"])
def test_the_admin_add_form_applies_the_registration_checks(owner, claim_corp, provider_id):
    claim_corp()
    Account.objects.create(user=owner, provider_id="linked-left", account_id="s")  # accounts of a gone provider
    form = SsoProviderForm(data={"provider_id": provider_id, "issuer": "https://idp.x.com", "domain": "x.com",
                                 "user": owner.pk, "oidc_config": '{"clientId": "x"}'})
    assert not form.is_valid() and "provider_id" in form.errors


# --- the claims -------------------------------------------------------------------------------------
def test_what_claims_an_id(configure, configure_sso):
    configure(social_providers={"corp": SOCIAL}, account_linking={"trusted_providers": ["partner"]})
    configure_sso(default_sso=[{"providerId": "whole", "domain": "w.com", "issuer": "https://i",
                                "oidcConfig": {"clientId": "c"}},
                               {"providerId": "keyed", "oidcConfig": {"privateKey": "k"}}],
                  trust_any_email_domain=["everywhere"])
    claimed = provider_claims.claims()
    assert {"corp", "partner", "whole", "github", "credential"} <= set(claimed)
    assert "keyed" not in claimed and "everywhere" not in claimed  # they configure a row, not replace it


# --- every entry point refuses a social-id row ------------------------------------------------------
@pytest.mark.parametrize("body", [{"providerId": "corp"}, {"domain": "evil.com"}, {"email": "m@evil.com"},
                                  {"organizationSlug": "evilorg"}], ids=["id", "domain", "email", "org-slug"])
def test_sign_in_through_a_social_id_row_is_a_conflict(api, stub_idp, configure, owner, claim_corp, body, caplog):
    configure(trusted_origins=[stub_idp.url])
    org = Organization.objects.create(name="Evil", slug="evilorg")
    make_row(owner, organization_id=org.pk, issuer=stub_idp.issuer, oidc_config=stub_idp.oidc_config())
    assert start(api, **body).status_code == 200  # before the claim
    claim_corp()
    with caplog.at_level(logging.ERROR, logger="sso"):
        assert conflict(start(api, **body))
    assert any("claimed by a social provider" in r.getMessage() and "Delete the row" in r.getMessage()
               for r in caplog.records)
    assert stub_idp.oidc_config()["clientSecret"] not in caplog.text  # I10


@pytest.mark.parametrize("claim", [{"account_linking": {"trusted_providers": ["corp"]}}, None],
                         ids=["trusted-providers", "built-in"])
def test_other_claims_refuse_the_row_too(api, owner, configure, claim):
    if claim:
        configure(**claim)
    make_row(owner, provider_id="corp" if claim else "github")
    assert conflict(start(api, providerId="corp" if claim else "github"))


@pytest.mark.parametrize("shared", [False, True], ids=["per-provider", "shared"])
def test_both_oidc_callbacks_refuse_a_sign_in_started_before_the_claim(api, stub_idp, owner, claim_corp,
                                                                       configure, configure_sso, shared):
    configure(trusted_origins=[stub_idp.url])
    if shared:
        configure_sso(redirect_uri="/sso/callback")
    make_row(owner, issuer=stub_idp.issuer, oidc_config=stub_idp.oidc_config())
    params = authorize_params(start(api, providerId="corp").json()["url"])
    stub_idp.id_token = stub_idp.sign(stub_idp.claims(params["nonce"], email="m@evil.com"))
    claim_corp()
    path = f"{BASE}/sso/callback" if shared else f"{BASE}/sso/callback/corp"
    assert conflict(api.get(path, {"code": "c", "state": params["state"],
                                   **({"iss": stub_idp.issuer} if shared else {})}))
    assert not stub_idp.token_requests and not Account.objects.filter(provider_id="corp").exists()


def test_saml_acs_idp_initiated_sp_metadata_and_slo_refuse_a_social_id_row(api, owner, claim_corp, configure_sso,
                                                                           pem_cert):
    configure_sso(saml={"enable_single_logout": True})
    make_row(owner, oidc_config=None, saml_config={"entryPoint": "https://idp.evil.com/sso", "cert": pem_cert,
                                                   "issuer": "https://idp.evil.com"})
    claim_corp()
    assert conflict(api.api_get("/sso/saml2/sp/metadata", {"providerId": "corp", "format": "xml"}))
    for path in ("/sso/saml2/callback/corp", "/sso/saml2/sp/acs/corp"):  # no RelayState: IdP-initiated
        assert conflict(api.post(f"{BASE}{path}", "SAMLResponse=PHNhbWxwOlJlc3BvbnNlLz4%3D",
                                 content_type="application/x-www-form-urlencoded",
                                 HTTP_ORIGIN="https://idp.evil.com"))
    assert conflict(api.api_get("/sso/saml2/sp/slo/corp", {"SAMLRequest": "x"}))  # SP-initiated shares its lookup


# --- management: API, SCIM, commands -----------------------------------------------------------------
@pytest.mark.parametrize("method,path,body", [
    ("get", "/sso/get-provider", {"providerId": "corp"}),
    ("post", "/sso/update-provider", {"providerId": "corp", "domain": "evil.org"}),
    ("post", "/sso/delete-provider", {"providerId": "corp"}),
    ("post", "/sso/request-domain-verification", {"providerId": "corp"}),
    ("post", "/sso/verify-domain", {"providerId": "corp"}),
    ("post", "/scim/generate-token", {"providerId": "corp"}),
], ids=lambda value: value if isinstance(value, str) and value.startswith("/") else "")
def test_the_owner_cannot_manage_a_social_id_row(owner, claim_corp, configure_sso, method, path, body):
    configure_sso(scim={"enabled": True})
    make_row(owner)
    victim = Account.objects.create(user=owner, provider_id="corp", account_id="someone-social")
    claim_corp()
    client = ApiClient()
    signed = client.api_post("/sign-in/email", {"email": "mallory@evil.com", "password": PASSWORD})
    assert signed.status_code == 200, signed.content
    response = client.api_get(path, body) if method == "get" else client.api_post(path, body)
    assert conflict(response)
    assert SsoProvider.objects.filter(provider_id="corp").exists() and Account.objects.filter(pk=victim.pk).exists()


def test_the_rows_scim_token_dies_with_the_claim(owner, claim_corp, configure_sso):
    configure_sso(scim={"enabled": True})
    _, token = tokens.issue(make_row(owner))
    assert tokens.authenticate(f"Bearer {token}") is not None
    claim_corp()
    assert tokens.authenticate(f"Bearer {token}") is None


@pytest.mark.parametrize("argv", [["scim_token", "corp"], ["sso_verify_domain", "corp"],
                                  ["sso_refresh_metadata", "corp"]], ids=["scim", "verify", "refresh"])
def test_commands_refuse_a_social_id_row(owner, claim_corp, argv, pem_cert):
    make_row(owner, oidc_config=None, saml_config={"entryPoint": "https://idp.evil.com/sso", "cert": pem_cert,
                                                   "idpMetadata": {"url": "https://idp.evil.com/md"}})
    claim_corp()
    with pytest.raises(CommandError, match="PROVIDER_ID_CONFLICT"):
        call_command(*argv)


def test_a_social_id_row_grants_no_organization_membership(owner, claim_corp):
    org = Organization.objects.create(name="Evil", slug="evilorg")
    make_row(owner, organization_id=org.pk)
    assert domain_membership.provider_for_email("m@evil.com") is not None
    claim_corp()
    assert domain_membership.provider_for_email("m@evil.com") is None


# --- the checks, and the resolution --------------------------------------------------------------------
def test_e019_names_every_conflicting_row_and_deletion_resolves_it(owner, claim_corp, admin_client):
    row = make_row(owner)
    make_row(owner, provider_id="github", domain="gh.evil.com")
    make_row(owner, provider_id="unrelated", domain="u.evil.com")
    social = Account.objects.create(user=owner, provider_id="corp", account_id="social-sub")
    assert [p.obj for p in checks.check_shadowed_rows(None, databases=["default"])] == ["github"]
    claim_corp()
    found = checks.check_shadowed_rows(None, databases=["default"])
    assert sorted((p.id, p.obj) for p in found) == [("sso.E019", "corp"), ("sso.E019", "github")]
    corp = next(p for p in found if p.obj == "corp")
    assert row.pk in corp.msg and "social provider" in corp.msg
    assert "Delete the row" in corp.hint and "link again at their next sign-in" in corp.hint
    url = reverse("admin:sso_ssoprovider_delete", args=[row.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not Account.objects.filter(pk=social.pk).exists()  # fail-safe: the social user links again
    assert [p.obj for p in checks.check_shadowed_rows(None, databases=["default"])] == ["github"]


def test_w003_names_a_row_trusted_for_every_domain_with_its_owner(owner, configure_sso):
    make_row(owner, provider_id="everywhere")
    assert checks.check_trusted_rows(None, databases=["default"]) == []
    configure_sso(trust_any_email_domain=["everywhere", "absent"])
    found = checks.check_trusted_rows(None, databases=["default"])
    assert [(p.id, p.obj) for p in found] == [("sso.W003", "everywhere")]
    assert "mallory@evil.com" in found[0].msg
    assert checks.check_trusted_rows(None) == []
