"""The signed-in user's own record: change-email, update-user, delete-user (core.md §4.13-4.15)."""

from rest_framework import serializers

from authservice import additional_fields, origins
from authservice.api import inputs
from authservice.api.context import Redirect
from authservice.api.registry import endpoint
from authservice.errors import APIError, codes
from authservice.flows import accounts, change_email as change_email_flow, delete_user as delete_flow
from authservice.flows import sessions


class ChangeEmailInput(inputs.Input):
    newEmail = inputs.String(email=True)
    callbackURL = inputs.String(required=False)


@endpoint("POST", "/change-email", name="change_email", body=ChangeEmailInput, guard="sensitive",
          summary="Change the caller's e-mail address", response="Status", tags=("user",))
def change_email(ctx):
    change_email_flow.change_email(
        ctx, sessions.get_session(ctx), ctx.body["newEmail"], ctx.body.get("callbackURL"),
    )
    return {"status": True}


class UpdateUserInput(inputs.Input):
    expected_top = "record"  # better-auth's schema is z.record(), so zod names it so

    name = inputs.String(required=False)
    image = inputs.ImageURL()
    # Any JSON value: only its presence matters (EMAIL_CAN_NOT_BE_UPDATED).
    email = serializers.JSONField(required=False, allow_null=True)

    def get_fields(self):
        return {**super().get_fields(), **additional_fields.input_fields()}


@endpoint("POST", "/update-user", name="update_user", body=UpdateUserInput, guard="session",
          summary="Update the caller's name or image", response="Status", tags=("user",))
def update_user(ctx):
    if inputs.js_truthy(ctx.body.get("email")):
        raise APIError(400, codes.EMAIL_CAN_NOT_BE_UPDATED)
    changes = {key: ctx.body[key] for key in accounts.PROFILE_FIELDS if key in ctx.body}
    additional = additional_fields.parse_input(ctx.body, "update") if additional_fields.declared() else {}
    accounts.update_profile(ctx, sessions.get_session(ctx), changes, additional)
    return {"status": True}


class DeleteUserInput(inputs.Input):
    callbackURL = inputs.String(required=False)
    password = inputs.String(required=False)
    token = inputs.String(required=False)


@endpoint("POST", "/delete-user", name="delete_user", body=DeleteUserInput, guard="sensitive",
          summary="Delete the caller's account, or mail a link that does", response="SuccessMessage",
          tags=("user",))
def delete_user(ctx):
    body = ctx.body
    message = delete_flow.delete_user(
        ctx, sessions.get_session(ctx), password=body.get("password"), token=body.get("token"),
        callback_url=body.get("callbackURL"),
    )
    return {"success": True, "message": message}


class DeleteUserCallbackQuery(inputs.Input):
    token = inputs.String()
    callbackURL = inputs.String(required=False)


@endpoint("GET", "/delete-user/callback", name="delete_user_callback", redirects=True, query=DeleteUserCallbackQuery,
          summary="Follow a deletion link", response="SuccessMessage", tags=("user",))
def delete_user_callback(ctx):
    callback_url = ctx.query.get("callbackURL")
    # GET skips the router-wide URL check; in-process calls without a request skip it too (§1.10).
    if callback_url and ctx.request is not None and not origins.is_allowed_url(callback_url):
        raise APIError(403, codes.INVALID_CALLBACK_URL)
    delete_flow.delete_by_link(ctx, ctx.query["token"])
    if callback_url:
        return Redirect(callback_url)
    return {"success": True, "message": delete_flow.USER_DELETED}
