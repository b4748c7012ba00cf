"""POST /sign-in/sso: start an SSO sign-in by providerId, organization, domain or e-mail (sso.md §3)."""


from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.cookies import signed_value
from sso import signin, state
from sso.inputs import Choice


class SignInSsoInput(inputs.Input):
    callbackURL = inputs.String()
    email = inputs.String(required=False)
    domain = inputs.String(required=False)
    providerId = inputs.String(required=False)
    organizationSlug = inputs.String(required=False)
    errorCallbackURL = inputs.String(required=False)
    newUserCallbackURL = inputs.String(required=False)
    loginHint = inputs.String(required=False)
    scopes = inputs.StringList(required=False)
    additionalParams = inputs.Record(required=False, values="string")
    requestSignUp = inputs.Boolean(required=False)
    providerType = Choice(("oidc", "saml"), required=False)


@endpoint("POST", "/sign-in/sso", name="sign_in_sso", body=SignInSsoInput, no_store=True,
          summary="Start a sign-in at the SSO provider of an organization, a domain or an e-mail",
          response={"url": "string", "redirect": "boolean"}, tags=("SSO",))
def sign_in_sso(ctx):
    url, cookie_key, state_key = signin.start(ctx, ctx.body)
    if cookie_key is not None:  # SAML sets its own cross-site cookie (sso.saml.sign_in.bind)
        ctx.set_cookie(cookie_key, signed_value(state_key), max_age=state.COOKIE_MAX_AGE)
    return {"url": url, "redirect": True}
