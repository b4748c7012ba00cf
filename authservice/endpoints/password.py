"""Password reset, change and check (core.md §4.9-§4.12, §4.18)."""

from authservice import wire
from authservice.api import inputs
from authservice.api.context import Redirect
from authservice.api.registry import endpoint
from authservice.endpoints.verification import check_callback_url
from authservice.flows import password_reset, passwords, sessions


class RequestPasswordResetInput(inputs.Input):
    email = inputs.String(email=True)
    redirectTo = inputs.String(required=False)


def _request_reset(ctx):
    return password_reset.request_reset(ctx, ctx.body["email"], ctx.body.get("redirectTo"))


@endpoint("POST", "/request-password-reset", name="request_password_reset",
          body=RequestPasswordResetInput, summary="Mail a password reset link",
          response="StatusMessage", tags=("password",))
def request_password_reset(ctx):
    return _request_reset(ctx)


# better-auth's pre-1.4 name, served with identical behaviour [D4].
@endpoint("POST", "/forget-password", name="forget_password", body=RequestPasswordResetInput,
          summary="Mail a password reset link (pre-1.4 name)", response="StatusMessage",
          tags=("password",))
def forget_password(ctx):
    return _request_reset(ctx)


class ResetPasswordCallbackQuery(inputs.Input):
    callbackURL = inputs.String()


@endpoint("GET", "/reset-password/:token", name="request_password_reset_callback",
          query=ResetPasswordCallbackQuery, summary="Where the reset mail's link lands",
          response="Redirect", tags=("password",))
def request_password_reset_callback(ctx):
    callback_url = check_callback_url(ctx)
    return Redirect(password_reset.callback_location(ctx, ctx.params.get("token", ""), callback_url))


class ResetPasswordInput(inputs.Input):
    newPassword = inputs.String()
    token = inputs.String(required=False)


class ResetPasswordQuery(inputs.Input):
    token = inputs.String(required=False)


@endpoint("POST", "/reset-password", name="reset_password", body=ResetPasswordInput,
          query=ResetPasswordQuery, summary="Set a new password with a reset token",
          response="Status", tags=("password",))
def reset_password(ctx):
    token = ctx.body.get("token") or ctx.query.get("token")
    return password_reset.reset(ctx, token, ctx.body["newPassword"])


class ChangePasswordInput(inputs.Input):
    newPassword = inputs.String()
    currentPassword = inputs.String()
    revokeOtherSessions = inputs.Boolean(required=False)


@endpoint("POST", "/change-password", name="change_password", body=ChangePasswordInput,
          guard="sensitive", summary="Change the caller's password", response="TokenUser",
          tags=("password",))
def change_password(ctx):
    found = sessions.get_session(ctx)
    new_session = passwords.change(
        ctx, found, current_password=ctx.body["currentPassword"],
        new_password=ctx.body["newPassword"],
        revoke_other_sessions=ctx.body.get("revokeOtherSessions") is True,
    )
    return {"token": new_session.token if new_session else None, "user": wire.user(found.user)}


class VerifyPasswordInput(inputs.Input):
    password = inputs.String()


@endpoint("POST", "/verify-password", name="verify_password", body=VerifyPasswordInput,
          guard="sensitive", summary="Check the caller's password", response="Status",
          tags=("password",))
def verify_password(ctx):
    passwords.verify(sessions.get_session(ctx).user, ctx.body["password"])
    return {"status": True}
