"""POST /sign-in/social, GET|POST /callback/:provider and POST /link-social (core.md §4.19, §5)."""

from urllib.parse import quote, urlencode

from rest_framework import serializers

from authservice import links, users
from authservice.api import inputs
from authservice.api.context import Redirect
from authservice.api.registry import endpoint
from authservice.flows import sessions, social
from authservice.social.base import RESERVED_PARAMS


class IdTokenInput(inputs.Object):
    token = inputs.String()
    nonce = inputs.String(required=False)
    accessToken = inputs.String(required=False)
    refreshToken = inputs.String(required=False)
    expiresAt = inputs.Number(required=False)
    user = inputs.Record(required=False)


class AdditionalParamsField(inputs.Record):
    def __init__(self, **kwargs):
        super().__init__(values="string", **kwargs)

    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        if any(key in RESERVED_PARAMS for key in data):
            raise serializers.ValidationError(
                "additionalParams cannot include reserved OAuth parameters: " + ", ".join(RESERVED_PARAMS))
        return data


class LinkSocialInput(inputs.Input):
    provider = inputs.String()
    callbackURL = inputs.String(required=False)
    errorCallbackURL = inputs.String(required=False)
    disableRedirect = inputs.Boolean(required=False)
    scopes = inputs.StringList(required=False)
    loginHint = inputs.String(required=False)
    requestSignUp = inputs.Boolean(required=False)
    additionalParams = AdditionalParamsField(required=False)
    additionalData = inputs.Record(required=False)
    idToken = IdTokenInput(required=False)


class SignInSocialInput(LinkSocialInput):
    newUserCallbackURL = inputs.String(required=False)


def _redirect_answer(ctx, url):
    disable_redirect = ctx.body.get("disableRedirect") is True
    if not disable_redirect:
        ctx.response_headers.set("Location", url)
    return {"url": url, "redirect": not disable_redirect}


@endpoint("POST", "/sign-in/social", name="sign_in_social", body=SignInSocialInput, no_store=True,
          summary="Sign in with a social provider", response="SocialSignIn", tags=("social",))
def sign_in_social(ctx):
    provider = social.require_provider(ctx.body["provider"])
    id_token = ctx.body.get("idToken")
    if id_token:
        return social.sign_in_with_id_token(ctx, provider, id_token, ctx.body.get("requestSignUp") is True)
    return _redirect_answer(ctx, social.start(ctx, provider, ctx.body))


@endpoint("POST", "/link-social", name="link_social_account", body=LinkSocialInput, guard="session",
          headers_required=True, no_store=True, summary="Link a social account to the signed-in user",
          response="SocialLink", tags=("social",))
def link_social_account(ctx):
    user = sessions.get_session(ctx).user
    provider = social.require_provider(ctx.body["provider"])
    id_token = ctx.body.get("idToken")
    if id_token:
        social.link_id_token(ctx, provider, id_token, user)
        return {"url": "", "status": True, "redirect": False}
    link = {"userId": str(user.pk), "email": users.email_of(user)}
    return _redirect_answer(ctx, social.start(ctx, provider, ctx.body, link=link))


@endpoint("GET", "/callback/:provider", name="callback_oauth", no_store=True,
          summary="Where the provider sends the browser back", response="Redirect", tags=("social",))
def callback_oauth(ctx):
    return Redirect(social.callback(ctx, ctx.params["provider"], ctx.query))


@endpoint("POST", "/callback/:provider", name="callback_oauth_post", form=True, body_optional=True,
          no_store=True, summary="form_post callback (Apple): bounced to the GET form",
          response="Redirect", tags=("social",))
def callback_oauth_post(ctx):
    # The browser returns with a GET so that its SameSite=Lax state cookie comes along.
    body = ctx.body if isinstance(ctx.body, dict) else {}
    try:
        merged = {**social.parse_callback_params(body), **social.parse_callback_params(ctx.query)}
    except social.SignInFailure as failure:
        return Redirect(social.failure_location(ctx, social.default_error_url(ctx), failure))
    provider_id = quote(ctx.params["provider"], safe="")
    return Redirect(f"{links.base(ctx)}/callback/{provider_id}?{urlencode(merged)}")
