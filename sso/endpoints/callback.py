"""GET /sso/callback/:providerId and GET /sso/callback: the OIDC provider sends the browser back here
(sso.md §3, §9). The shared one serves the ``redirect_uri`` setting (better-auth's redirectURI)."""

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


@endpoint("GET", "/sso/callback", name="callback_sso_shared", query=CallbackQuery, no_store=True,
          summary="Shared OIDC redirect target of every SSO provider (the provider is read from the state)",
          response="Redirect", tags=("SSO",))
def callback_sso_shared(ctx):
    return Redirect(client.finish(ctx, None, ctx.query))
