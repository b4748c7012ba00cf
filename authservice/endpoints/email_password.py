"""POST /sign-up/email and POST /sign-in/email."""

from authservice import additional_fields, wire
from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.flows import email_password


class SignUpEmailInput(inputs.Input):
    name = inputs.String()
    email = inputs.String(email=True)
    password = inputs.String(min_length=1)
    image = inputs.ImageURL(allow_null=False)
    callbackURL = inputs.String(required=False)
    rememberMe = inputs.Boolean(required=False)

    def get_fields(self):
        return {**super().get_fields(), **additional_fields.input_fields()}


@endpoint("POST", "/sign-up/email", name="sign_up_email", body=SignUpEmailInput, login_csrf=True,
          form=True, no_store=True, summary="Sign up with e-mail and password",
          response="TokenUser", tags=("email-password",))
def sign_up_email(ctx):
    body = ctx.body
    return email_password.sign_up(
        ctx, name=body["name"], email=body["email"], password=body["password"],
        image=body.get("image"), callback_url=body.get("callbackURL"),
        remember=body.get("rememberMe", True) is not False, body=body,
    )


class SignInEmailInput(inputs.Input):
    email = inputs.String()
    password = inputs.String()
    callbackURL = inputs.String(required=False)
    rememberMe = inputs.Boolean(required=False)


@endpoint("POST", "/sign-in/email", name="sign_in_email", body=SignInEmailInput, login_csrf=True,
          form=True, no_store=True, summary="Sign in with e-mail and password",
          response="SignIn", tags=("email-password",))
def sign_in_email(ctx):
    body = ctx.body
    session, user = email_password.sign_in(
        ctx, email=body["email"], password=body["password"],
        remember=body.get("rememberMe", True) is not False,
    )
    if isinstance(session, dict):  # better-auth's twoFactorRedirect answer: no session yet
        return session
    callback_url = body.get("callbackURL")
    if callback_url:
        ctx.response_headers.set("Location", callback_url)
        return {"redirect": True, "token": session.token, "url": callback_url, "user": wire.user(user)}
    return {"redirect": False, "token": session.token, "user": wire.user(user)}
