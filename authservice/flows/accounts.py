"""The signed-in user's own record: profile fields and linked accounts (core.md §4.14, §4.19)."""

from django.contrib.auth import get_user_model
from django.db import transaction

from authservice import app_settings, users
from authservice.errors import APIError, codes
from authservice.flows import sessions
from authservice.models import Account

# Fields a user may set on themselves through /update-user.
PROFILE_FIELDS = ("name", "image")


def update_profile(ctx, found, changes, additional=None):
    """Apply ``changes`` (a subset of PROFILE_FIELDS) and ``additional`` (declared additional fields,
    by wire name), and re-send the session cookie."""
    fields = [name for name in PROFILE_FIELDS if name in changes]
    if not fields and not additional:
        raise APIError(400, codes.NO_FIELDS_TO_UPDATE)
    users.update(found.user, additional=additional, **{name: changes[name] for name in fields})
    sessions.set_session_cookie(ctx, found.session)
    return found.user


def list_accounts(user):
    return Account.objects.filter(user=user).order_by("created_at", "id")


def unlink(user, account_row_id):
    """Delete one of ``user``'s accounts, never the last one unless ``allow_unlinking_all``."""
    with transaction.atomic():
        # Locking the user serialises concurrent unlinks, which could otherwise remove the last two.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        accounts = list(Account.objects.filter(user=user))
        if len(accounts) == 1 and not app_settings.account_linking.allow_unlinking_all:
            raise APIError(400, codes.FAILED_TO_UNLINK_LAST_ACCOUNT)
        account = next((a for a in accounts if a.pk == account_row_id), None)
        if account is None:
            raise APIError(400, codes.ACCOUNT_NOT_FOUND)
        account.delete()
        if account.provider_id == Account.CREDENTIAL:
            # better-auth keeps the hash on the credential account, so unlinking it removes the password.
            user.set_unusable_password()
            user.save(update_fields=["password"])  # not updatedAt: better-auth leaves it too
