"""SCIM connection management: better-auth's ``/scim/generate-token`` and ``/scim/delete-provider-connection``.

The SCIM protocol itself (``/scim/v2/...``) is not a better-auth-shaped endpoint: sso/scim/views.py.
Unlike better-auth, the ``providerId`` names an SSO provider here: the connection belongs to it (and
through it to its organization), so SCIM users are the users that provider signs in (docs/scim.md).
"""

from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.errors import APIError
from authservice.flows import sessions
from sso import app_settings as sso_settings
from sso import providers
from sso.errors import codes
from sso.scim import tokens
from sso.scim.models import ScimConnection


def scim_enabled():
    return sso_settings.scim.enabled


class GenerateTokenInput(inputs.Input):
    providerId = inputs.String(min_length=1, max_length=255)
    organizationId = inputs.String(required=False, max_length=255)


class ProviderIdInput(inputs.Input):
    providerId = inputs.String(min_length=1, max_length=255)


# "sensitive": the session is read from the database, never from the cookie cache, before a credential that
# can deactivate a whole organization is made.
@endpoint("POST", "/scim/generate-token", name="generate_scim_token", body=GenerateTokenInput, guard="sensitive",
          summary="Issue the SCIM bearer token of an SSO provider's connection (the previous one stops working)",
          response="ScimToken", tags=("scim",), enabled=scim_enabled, no_store=True)
def generate_scim_token(ctx):
    user = sessions.get_session(ctx).user
    # The provider's management rule: its owner, or an owner/admin of its organization.
    provider = providers.get_for(user, ctx.body["providerId"])
    organization_id = ctx.body.get("organizationId")
    if organization_id and organization_id != provider.organization_id:
        raise APIError(400, codes.SCIM_ORGANIZATION_MISMATCH)
    _, token = tokens.issue(provider, user=user)
    ctx.status_code = 201
    return {"scimToken": token}


@endpoint("POST", "/scim/delete-provider-connection", name="delete_scim_provider_connection",
          body=ProviderIdInput, guard="sensitive", summary="Revoke the SCIM token of an SSO provider's connection",
          response="Success", tags=("scim",), enabled=scim_enabled)
def delete_scim_provider_connection(ctx):
    provider = providers.get_for(sessions.get_session(ctx).user, ctx.body["providerId"])
    connection = ScimConnection.objects.filter(provider=provider).first()
    if connection is None or connection.token_hash is None:
        raise APIError(404, codes.SCIM_CONNECTION_NOT_FOUND)
    tokens.revoke(connection)
    return {"success": True}
