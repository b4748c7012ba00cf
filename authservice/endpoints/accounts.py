"""Linked accounts: GET /list-accounts and POST /unlink-account (core.md §4.19)."""

from authservice import wire
from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.flows import accounts, sessions


@endpoint("GET", "/list-accounts", name="list_user_accounts", guard="session",
          summary="The caller's linked accounts", response="AccountList", tags=("account",))
def list_user_accounts(ctx):
    user = sessions.get_session(ctx).user
    return [wire.account(account) for account in accounts.list_accounts(user)]


class UnlinkAccountInput(inputs.Input):
    accountId = inputs.String()  # the account row's id, as better-auth 1.7.5 expects


@endpoint("POST", "/unlink-account", name="unlink_account", body=UnlinkAccountInput, guard="fresh",
          summary="Unlink one of the caller's accounts", response="Status", tags=("account",))
def unlink_account(ctx):
    accounts.unlink(sessions.get_session(ctx).user, ctx.body["accountId"])
    return {"status": True}
