"""SCIM fixtures: an SSO provider with a verified domain, its connection's token, a SCIM client."""

import json

import pytest
from django.test import Client

from tests.conftest import _deep_merge
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures

BASE = "/api/auth/scim/v2"
SCIM = "application/scim+json"
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_URN = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ERROR_URN = "urn:ietf:params:scim:api:messages:2.0:Error"


@pytest.fixture(autouse=True)
def _scim_on(settings, _sso_defaults):  # noqa: F811 - the fixture above, ordered first
    settings.AUTHSERVICE_SSO = _deep_merge(settings.AUTHSERVICE_SSO, {"scim": {"enabled": True}})


class ScimClient(Client):
    """Speaks SCIM to ``{base}/scim/v2`` with one connection's bearer token."""

    def __init__(self, token, **kwargs):
        super().__init__(**kwargs)
        self.token = token

    def _auth(self, extra):
        if self.token is not None:
            extra.setdefault("HTTP_AUTHORIZATION", f"Bearer {self.token}")
        return extra

    def scim(self, method, path, body=None, content_type=SCIM, **extra):
        data = json.dumps(body) if body is not None else ""
        return self.generic(method, BASE + path, data, content_type=content_type, **self._auth(extra))

    def get_(self, path, query=None, **extra):
        return self.get(BASE + path, query or {}, **self._auth(extra))


@pytest.fixture
def provider_factory(make_user):
    """``provider_factory("acme", domain="acme.com", organization=True)``: an SSO provider with a verified
    domain, owned by a user (and an organization whose owner that user is)."""
    from sso.models import Member, Organization, SsoProvider

    def create(provider_id="acme", domain="acme.com", organization=True, verified=True):
        owner = make_user(email=f"owner@{provider_id}-admin.example")
        org = None
        if organization:
            org = Organization.objects.create(name=provider_id, slug=provider_id)
            Member.objects.create(organization=org, user=owner, role=Member.OWNER)
        return SsoProvider.objects.create(
            provider_id=provider_id, issuer=f"https://idp.{domain}", domain=domain, domain_verified=verified,
            oidc_config={"clientId": "c", "clientSecret": "s"}, user=owner,
            organization_id=org.pk if org else None)

    return create


@pytest.fixture
def provider(provider_factory):
    return provider_factory()


@pytest.fixture
def scim(provider):
    """A ScimClient holding a fresh token of ``provider``'s connection; ``scim.connection`` is it."""
    from sso.scim import tokens

    connection, token = tokens.issue(provider)
    client = ScimClient(token)
    client.connection, client.provider = connection, provider
    return client


def user_body(user_name="bjensen@acme.com", **extra):
    body = {"schemas": [USER_URN], "userName": user_name, "name": {"givenName": "Barbara", "familyName": "Jensen"},
            "emails": [{"value": user_name, "type": "work", "primary": True}], "active": True}
    body.update(extra)
    return body


def patch_body(*operations):
    return {"schemas": [PATCH_URN], "Operations": list(operations)}


def scim_error(response, status, scim_type=None):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith(SCIM)
    body = response.json()
    assert body["schemas"] == [ERROR_URN]
    assert body["status"] == str(status)
    if scim_type is not None:
        assert body.get("scimType") == scim_type, body
    return body
