"""Verify a provider's domain from the shell: the same DNS TXT check as POST /sso/verify-domain."""

from django.core.management.base import BaseCommand, CommandError

from authservice.errors import APIError
from sso import domains
from sso.models import SsoProvider


class Command(BaseCommand):
    help = "Look up _auth-token-<providerId>.<domain> TXT records and mark the provider verified."

    def add_arguments(self, parser):
        parser.add_argument("provider_id")

    def handle(self, *args, provider_id, **options):
        provider = SsoProvider.objects.filter(provider_id=provider_id).first()
        if provider is None:
            raise CommandError(f"No SSO provider {provider_id!r}")
        try:
            domains.verify(provider)
        except APIError as error:
            raise CommandError(f"{error.code}: {error.message}") from None
        self.stdout.write(self.style.SUCCESS(f"{provider_id}: {provider.domain} verified"))
