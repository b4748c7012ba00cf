"""POST /scim/generate-token (better-auth's path and body) and /scim/delete-provider-connection."""

import base64

import pytest

from sso.models import Member
from tests.conftest import error_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_client(provider, sign_in_as):
    return sign_in_as(provider.user)


@pytest.fixture
def sign_in_as():
    from tests.conftest import PASSWORD, ApiClient

    def create(user):
        client = ApiClient()
        response = client.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD})
        assert response.status_code == 200, response.content
        return client

    return create


def test_the_providers_owner_gets_a_token_once_in_better_auths_shape(owner_client, provider):
    from sso.scim.models import ScimConnection

    response = owner_client.api_post("/scim/generate-token", {"providerId": provider.provider_id})
    assert response.status_code == 201, response.content
    token = response.json()["scimToken"]
    claim = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    assert claim.split(":")[1:] == [provider.provider_id, provider.organization_id]
    connection = ScimConnection.objects.get(provider=provider)
    assert connection.token_hash and token not in connection.token_hash


def test_the_token_opens_the_scim_api(owner_client, provider):
    from tests.sso.scim.conftest import ScimClient

    token = owner_client.api_post("/scim/generate-token", {"providerId": provider.provider_id}).json()["scimToken"]
    assert ScimClient(token).get_("/ServiceProviderConfig").status_code == 200


def test_an_organization_admin_may_generate(provider, make_user, sign_in_as):
    admin = make_user(email="admin@acme.com")
    Member.objects.create(organization_id=provider.organization_id, user=admin, role=Member.ADMIN)
    response = sign_in_as(admin).api_post("/scim/generate-token", {"providerId": provider.provider_id})
    assert response.status_code == 201


def test_a_plain_member_may_not(provider, make_user, sign_in_as):
    member = make_user(email="member@acme.com")
    Member.objects.create(organization_id=provider.organization_id, user=member, role=Member.MEMBER)
    response = sign_in_as(member).api_post("/scim/generate-token", {"providerId": provider.provider_id})
    assert response.status_code == 403
    assert error_of(response)["code"] == "PROVIDER_ACCESS_DENIED"


def test_a_stranger_may_not(provider, make_user, sign_in_as):
    response = sign_in_as(make_user(email="eve@evil.example")).api_post(
        "/scim/generate-token", {"providerId": provider.provider_id})
    assert response.status_code == 403


def test_without_a_session_it_is_401(api, provider):
    assert api.api_post("/scim/generate-token", {"providerId": provider.provider_id}).status_code == 401


def test_an_unknown_provider_is_404(owner_client):
    assert owner_client.api_post("/scim/generate-token", {"providerId": "nope"}).status_code == 404


def test_another_organization_id_is_refused(owner_client, provider):
    response = owner_client.api_post("/scim/generate-token",
                                     {"providerId": provider.provider_id, "organizationId": "other-org"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "SCIM_ORGANIZATION_MISMATCH"


def test_delete_provider_connection_revokes_the_token(owner_client, provider):
    from tests.sso.scim.conftest import ScimClient

    token = owner_client.api_post("/scim/generate-token", {"providerId": provider.provider_id}).json()["scimToken"]
    response = owner_client.api_post("/scim/delete-provider-connection", {"providerId": provider.provider_id})
    assert response.status_code == 200 and response.json() == {"success": True}
    assert ScimClient(token).get_("/Users").status_code == 401


def test_with_scim_off_the_endpoints_do_not_exist(owner_client, provider, configure_sso):
    from tests.sso.scim.conftest import ScimClient
    from sso.scim import tokens

    _, token = tokens.issue(provider)
    configure_sso(scim={"enabled": False})
    assert owner_client.api_post("/scim/generate-token", {"providerId": provider.provider_id}).status_code == 404
    assert ScimClient(token).get_("/Users").status_code == 404
