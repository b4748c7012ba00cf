"""POST /send-verification-email and GET /verify-email (core.md §4.7, §4.8)."""

from authservice import origins
from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.errors import APIError, codes
from authservice.flows import email_verification


class SendVerificationEmailInput(inputs.Input):
    email = inputs.String(email=True)
    callbackURL = inputs.String(required=False)


@endpoint("POST", "/send-verification-email", name="send_verification_email", during_enrolment=True,
          body=SendVerificationEmailInput, summary="Mail an e-mail verification link",
          response="Status", tags=("email-verification",))
def send_verification_email(ctx):
    return email_verification.send(ctx, ctx.body["email"], ctx.body.get("callbackURL"))


class VerifyEmailQuery(inputs.Input):
    token = inputs.String()
    callbackURL = inputs.String(required=False)


def check_callback_url(ctx):
    """GET routes skip the router-wide URL check, so they run it here (core.md §1.9).

    Only for real requests: an in-process caller chose its own URL (core.md §1.10).
    """
    callback_url = ctx.query.get("callbackURL")
    if ctx.request is not None and callback_url and not origins.is_allowed_url(callback_url):
        raise APIError(403, codes.INVALID_CALLBACK_URL)
    return callback_url or None


@endpoint("GET", "/verify-email", name="verify_email", redirects=True, query=VerifyEmailQuery, during_enrolment=True,
          summary="Follow an e-mail verification or change-e-mail link",
          response="StatusUserOrRedirect", tags=("email-verification",))
def verify_email(ctx):
    callback_url = check_callback_url(ctx)
    return email_verification.verify(ctx, ctx.query["token"], callback_url)
