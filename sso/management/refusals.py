"""The commands' form of the API's refusals for a provider id they must not act on."""

from django.core.management.base import CommandError

from authservice.errors import APIError
from sso import default_providers, provider_claims


def refuse(provider_id, provider=None, prefix=""):
    """CommandError for a settings provider's id (the operator's: the API's 403 PROVIDER_FROM_SETTINGS;
    in the table it names only a row that provider shadows, an attacker's maybe) or for ``provider``, a
    row whose id the deployment claims otherwise (409 PROVIDER_ID_CONFLICT: the row is never used)."""
    try:
        default_providers.refuse_management(provider_id)
        provider_claims.refuse_row(provider)
    except APIError as error:
        raise CommandError(f"{prefix}{error.code}: {error.message}") from None
