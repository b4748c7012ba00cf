"""GET /sso/callback/:providerId: the OIDC provider sends the browser back here (sso.md §3, §9)."""

from authservice.api import inputs
from authservice.api.context import Redirect
from authservice.api.registry import endpoint
from sso.oidc import client


class CallbackQuery(inputs.Input):
    code = inputs.String(required=False)
    state = inputs.String(required=False)
    error = inputs.String(required=False)
    error_description = inputs.String(required=False)
    iss = inputs.String(required=False)  # RFC 9207, sent by providers that support it


@endpoint("GET", "/sso/callback/:providerId", name="callback_sso", query=CallbackQuery, no_store=True,
          summary="OIDC redirect target of an SSO provider", response="Redirect", tags=("SSO",))
def callback_sso(ctx):
    return Redirect(client.finish(ctx, ctx.params["providerId"], ctx.query))
