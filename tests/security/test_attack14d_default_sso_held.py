"""Attack 14d, providers from settings (``AUTHSERVICE_SSO["default_sso"]``): attempts that held.

Kept as regression guards; each names the invariant it keeps (I1 trust, I10 secrets, and the
"read-only" rule of docs/sso-options.md). The settings provider ``corp`` (corp.com) is the honest IdP, a
loopback stub that signs the ID tokens; the attacker is an ordinary account holder with their own IdP
and, where it says so, a row registered under the id before the operator named it. While such a row
exists the settings provider fails closed (409 PROVIDER_ID_CONFLICT) until the operator deletes the row
(sso/default_providers.py); the guards that used it through a shadowed row now assert that, then delete it.
"""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account, Session
from sso.models import Member, Organization, SsoProvider
from tests.conftest import PASSWORD, ApiClient, error_of
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import *  # noqa: F403 - fixtures
from tests.sso.conftest_oidc import StubIdP, authorize_params
from tests.sso.scim.conftest import ScimClient, user_body

pytestmark = pytest.mark.django_db

SECRET = "corp-client-secret-value"


@pytest.fixture
def idps(stub_idp, configure):
    evil = StubIdP()
    configure(trusted_origins=[stub_idp.url, evil.url])
    yield stub_idp, evil
    evil.close()


def item(honest, **changes):
    return {"providerId": "corp", "domain": "corp.com", "issuer": honest.issuer,
            "oidcConfig": honest.oidc_config(clientSecret=SECRET), **changes}


@pytest.fixture
def mallory(make_user):
    make_user(email="mallory@evil.com")
    browser = ApiClient()
    assert browser.api_post("/sign-in/email", {"email": "mallory@evil.com", "password": PASSWORD}).status_code == 200
    browser.user = get_user_model().objects.get(email="mallory@evil.com")
    return browser


def shadow_row(owner, evil, **fields):
    """The attacker's row ``corp``, registered before the operator named the id."""
    fields.setdefault("domain", "evil.com")
    return SsoProvider.objects.create(provider_id="corp", issuer=evil.issuer, domain_verified=True,
                                      oidc_config=evil.oidc_config(), user=owner, **fields)


def start(browser, **body):
    body = {"callbackURL": "/dashboard", "errorCallbackURL": "/oops", **body}
    response = browser.api_post("/sign-in/sso", body)
    assert response.status_code == 200, response.content
    return response.json()["url"]


def finish(browser, idp, url, path="/api/auth/sso/callback/corp", **claims):
    params = authorize_params(url)
    idp.id_token = idp.sign(idp.claims(params["nonce"], **claims))
    response = browser.get(path, {"code": "c", "state": params["state"]})
    assert response.status_code == 302
    return parse_qs(urlsplit(response["Location"]).query).get("error", [None])[-1]


def signed_in_email(browser):
    body = browser.api_get("/get-session").json()
    return (body or {}).get("user", {}).get("email")


# --- registration of look-alike ids --------------------------------------------------------------
@pytest.mark.parametrize("provider_id", [" corp", "corp ", "corp\u200b", "c\u043erp", "corp.", "corp/x", "corp%00"])
def test_look_alike_ids_of_a_settings_provider_are_refused(mallory, idps, configure_sso, provider_id):
    """A row whose id normalises to the settings one (whitespace, zero-width, Cyrillic o, dot) cannot exist."""
    honest, evil = idps
    configure_sso(default_sso=[item(honest)])
    response = mallory.api_post("/sso/register", {"providerId": provider_id, "issuer": evil.issuer,
                                                  "domain": "evil.com", "oidcConfig": evil.oidc_config(skipDiscovery=True)})
    assert response.status_code in (400, 422), response.content
    assert not SsoProvider.objects.exists()


def test_a_case_variant_row_never_stands_in_for_the_settings_provider(api, mallory, idps, configure_sso):
    """``CORP`` may be registered (ids are case-sensitive everywhere), but every lookup of ``corp`` is the
    settings provider's, and the variant's management never reaches it."""
    honest, evil = idps
    configure_sso(default_sso=[item(honest)])
    response = mallory.api_post("/sso/register", {"providerId": "CORP", "issuer": evil.issuer, "domain": "corp.com",
                                                  "oidcConfig": evil.oidc_config(skipDiscovery=True)})
    assert response.status_code == 200, response.content  # ids are case-sensitive: a distinct provider
    if response.status_code == 200:
        variant = SsoProvider.objects.get(provider_id="CORP")
        variant.domain_verified = True  # as if the attacker proved corp.com: the worst case
        variant.save()
        assert start(api, providerId="corp").startswith(honest.url)
        assert start(api, email="ada@corp.com").startswith(honest.url)
        got = mallory.api_get("/sso/get-provider", {"providerId": "corp"})
        assert got.status_code == 403 and error_of(got)["code"] == "PROVIDER_FROM_SETTINGS"
        # A state of the variant does not finish at the settings provider's callback.
        url = start(api, providerId="CORP")
        assert finish(api, evil, url, email="ada@corp.com") is not None
        assert not Session.objects.exclude(user=mallory.user).exists()


# --- read-only, I10 --------------------------------------------------------------------------------
@pytest.mark.parametrize(("path", "payload"), [
    ("/scim/generate-token", {"providerId": "corp"}),
    ("/scim/delete-provider-connection", {"providerId": "corp"}),
    ("/sso/update-provider", {"providerId": "corp", "organizationProvisioning": None}),
])
def test_scim_and_update_refuse_the_settings_provider_to_the_owner_of_its_shadowed_row(
        mallory, idps, configure_sso, path, payload):
    honest, evil = idps
    shadow_row(mallory.user, evil)
    configure_sso(default_sso=[item(honest)], scim={"enabled": True})
    response = mallory.api_post(path, payload)
    assert response.status_code == 403 and error_of(response)["code"] == "PROVIDER_FROM_SETTINGS", response.content


def test_no_answer_reveals_the_settings_providers_secret(api, mallory, idps, configure_sso):
    """I10: list, get, sign-in start (refused while the row shadows, then after its deletion) and a
    failing callback never carry the client secret."""
    honest, evil = idps
    shadow_row(mallory.user, evil)
    configure_sso(default_sso=[item(honest)])
    answers = [mallory.api_get("/sso/providers"), mallory.api_get("/sso/get-provider", {"providerId": "corp"}),
               api.api_post("/sign-in/sso", {"providerId": "corp", "callbackURL": "/d"})]
    assert error_of(answers[-1])["code"] == "PROVIDER_ID_CONFLICT"  # fails closed while the row exists
    SsoProvider.objects.filter(provider_id="corp").delete()
    answers.append(api.api_post("/sign-in/sso", {"providerId": "corp", "callbackURL": "/d"}))
    honest.token_status, honest.token_body = 401, {"error": "invalid_client"}
    url = answers[-1].json()["url"]
    params = authorize_params(url)
    answers.append(api.get("/api/auth/sso/callback/corp", {"code": "c", "state": params["state"]}))
    for answer in answers:
        assert SECRET.encode() not in answer.content and SECRET not in answer.get("Location", "")


# --- I1: the settings provider vouches for its domains only --------------------------------------
@pytest.mark.parametrize("verification", [True, False], ids=["verification-on", "verification-off"])
@pytest.mark.parametrize("email", ["ada@evilcorp.com", "ada@corp.com.evil.com", "ada@corp.co", "ada@xn--crp-",
                                   "\"ada@corp.com\"@evil.com", "ada@corp.com@evil.com"])
def test_a_settings_provider_vouches_for_no_look_alike_domain(api, idps, configure_sso, make_user, email,
                                                              verification):
    honest, _ = idps
    configure_sso(default_sso=[item(honest)], domain_verification={"enabled": verification},
                  account_linking={"trust_email_verified": True})
    make_user(email=email.lower(), email_verified=True) if email.count("@") == 1 else None
    error = finish(api, honest, start(api, providerId="corp"), email=email)
    assert error is not None
    assert not Account.objects.filter(provider_id="corp").exists()
    assert not Session.objects.exists()


def test_an_email_claim_that_is_a_list_signs_in_no_one(api, idps, configure_sso):
    honest, _ = idps
    configure_sso(default_sso=[item(honest)])
    assert finish(api, honest, start(api, providerId="corp"), email=["ada@corp.com", "x@evil.com"]) is not None
    assert not Session.objects.exists()


def test_email_verified_as_a_string_links_nothing_without_domain_verification(api, idps, configure_sso, make_user):
    """Without domain verification an existing user links only on a verified claim; ``"false"`` is none."""
    honest, _ = idps
    victim = make_user(email="ada@corp.com", email_verified=True)
    configure_sso(default_sso=[item(honest)], domain_verification={"enabled": False},
                  account_linking={"trust_email_verified": True})
    assert finish(api, honest, start(api, providerId="corp"), email="ada@corp.com", email_verified="false")
    assert not Session.objects.filter(user=victim).exists()


# --- precedence ---------------------------------------------------------------------------------------
def test_a_more_specific_verified_row_does_not_capture_the_settings_domain(api, mallory, idps, configure_sso):
    honest, evil = idps
    SsoProvider.objects.create(provider_id="eng", issuer=evil.issuer, domain="eng.corp.com", domain_verified=True,
                               oidc_config=evil.oidc_config(), user=mallory.user)
    configure_sso(default_sso=[item(honest)])
    assert start(api, email="ada@eng.corp.com").startswith(honest.url)
    assert start(api, domain="ENG.CORP.COM.").startswith(honest.url)


def test_a_state_of_the_row_started_before_the_settings_item_cannot_finish(api, mallory, idps, configure_sso):
    """A sign-in started at the row, finished after the operator named the id, on both callbacks."""
    honest, evil = idps
    shadow_row(mallory.user, evil, domain="corp.com")
    first, second = start(api, providerId="corp"), start(ApiClient(), providerId="corp")
    configure_sso(default_sso=[item(honest)])
    # While the row exists the id fails closed: a JSON 409 rather than the callback's error redirect.
    params = authorize_params(first)
    evil.id_token = evil.sign(evil.claims(params["nonce"], email="ada@corp.com"))
    refused = api.get("/api/auth/sso/callback/corp", {"code": "c", "state": params["state"]})
    assert refused.status_code == 409 and error_of(refused)["code"] == "PROVIDER_ID_CONFLICT"
    configure_sso(redirect_uri="/sso/callback")
    params = authorize_params(second)
    evil.id_token = evil.sign(evil.claims(params["nonce"], email="ada@corp.com"))
    api.get("/api/auth/sso/callback", {"code": "c", "state": params["state"], "iss": evil.issuer})
    assert not Session.objects.exclude(user=mallory.user).exists()
    assert not evil.token_requests


def test_a_shadowed_rows_scim_token_adopts_no_settings_user_with_domain_verification(
        api, mallory, idps, configure_sso):
    """I1: with domain verification on the shadowed row's connection is trusted for its own verified
    domains only; the settings provider's user (corp.com) is out of its reach."""
    honest, evil = idps
    configure_sso(scim={"enabled": True})
    shadow_row(mallory.user, evil)
    token = mallory.api_post("/scim/generate-token", {"providerId": "corp"}).json()["scimToken"]
    configure_sso(default_sso=[item(honest)])
    # The row's connection is refused while the settings provider shadows it, and goes with the row.
    assert ScimClient(token).scim("POST", "/Users", user_body("ada@corp.com", active=False)).status_code == 401
    SsoProvider.objects.filter(provider_id="corp").delete()
    assert finish(api, honest, start(api, providerId="corp"), sub="victim", email="ada@corp.com") is None
    response = ScimClient(token).scim("POST", "/Users", user_body("ada@corp.com", active=False))
    assert response.status_code == 401
    assert get_user_model().objects.get(email="ada@corp.com").is_active


def test_settings_provider_users_join_its_organization_not_the_shadowed_rows(api, mallory, idps, configure_sso):
    honest, evil = idps
    theirs = Organization.objects.create(name="Evil", slug="evil")
    Member.objects.create(organization=theirs, user=mallory.user, role=Member.OWNER)
    ours = Organization.objects.create(name="Corp", slug="corp")
    shadow_row(mallory.user, evil, organization_id=theirs.pk)
    configure_sso(default_sso=[item(honest, organizationId=ours.pk)])
    refused = api.api_post("/sign-in/sso", {"providerId": "corp", "callbackURL": "/dashboard"})
    assert refused.status_code == 409 and error_of(refused)["code"] == "PROVIDER_ID_CONFLICT"
    SsoProvider.objects.filter(provider_id="corp").delete()  # the operator resolves the conflict
    assert finish(api, honest, start(api, providerId="corp"), email="ada@corp.com") is None
    assert list(Member.objects.filter(user__email="ada@corp.com").values_list("organization__slug", flat=True)) \
        == ["corp"]
