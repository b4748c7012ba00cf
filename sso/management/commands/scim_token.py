"""Issue or revoke an SSO provider's SCIM token from the shell (as POST /scim/generate-token does)."""

from django.core.management.base import BaseCommand, CommandError

from sso.management import refusals
from sso.models import SsoProvider
from sso.scim import tokens
from sso.scim.models import ScimConnection


class Command(BaseCommand):
    help = ("Print a new SCIM bearer token for the provider's connection (the previous one stops working), "
            "or revoke it with --revoke.")

    def add_arguments(self, parser):
        parser.add_argument("provider_id")
        parser.add_argument("--revoke", action="store_true", help="Revoke the live token instead.")

    def handle(self, *args, provider_id, revoke=False, **options):
        provider = SsoProvider.objects.filter(provider_id=provider_id).first()
        refusals.refuse(provider_id, provider)
        if provider is None:
            raise CommandError(f"No SSO provider {provider_id!r}")
        if revoke:
            connection = ScimConnection.objects.filter(provider=provider).first()
            if connection is None or connection.token_hash is None:
                raise CommandError(f"{provider_id} has no live SCIM token")
            tokens.revoke(connection)
            self.stdout.write(self.style.SUCCESS(f"{provider_id}: SCIM token revoked"))
            return
        _, token = tokens.issue(provider)
        self.stdout.write(token)
        self.stderr.write(f"{provider_id}: new SCIM token above; it is not stored and not shown again.")
