"""Verify a provider's domain from the shell: the same DNS TXT check as POST /sso/verify-domain.

``--request-token`` first issues the token (as POST /sso/request-domain-verification does) and prints
the TXT record to publish; without a token the check has nothing to compare with.
"""

from django.core.management.base import BaseCommand, CommandError

from authservice import app_settings
from authservice.errors import APIError
from sso import domains, hostnames
from sso.errors import codes
from sso.models import SsoProvider


class Command(BaseCommand):
    help = "Look up _auth-token-<providerId>.<domain> TXT records and mark the provider verified."

    def add_arguments(self, parser):
        parser.add_argument("provider_id")
        parser.add_argument("--request-token", action="store_true",
                            help="Issue a token (or show the unexpired one) and print the TXT record to "
                                 "publish, instead of checking it.")

    def handle(self, *args, provider_id, request_token=False, **options):
        provider = SsoProvider.objects.filter(provider_id=provider_id).first()
        if provider is None:
            raise CommandError(f"No SSO provider {provider_id!r}")
        try:
            if request_token:
                self.print_record(provider, domains.request_token(provider))
                return
            domains.verify(provider)
        except APIError as error:
            raise CommandError(f"{error.code}: {error.message}{self.next_step(error, provider_id)}") from None
        self.stdout.write(self.style.SUCCESS(f"{provider_id}: {provider.domain} verified"))

    def print_record(self, provider, token):
        ident = domains.identifier(provider.provider_id)
        for host in hostnames.domain_list(provider.domain):
            self.stdout.write(f'{ident}.{host}  TXT  "{token}"')
        self.stdout.write(f"Publish the record, then run: python manage.py sso_verify_domain {provider.provider_id}")

    def next_step(self, error, provider_id):
        if error.code != codes.NO_PENDING_VERIFICATION:
            return ""
        return (f". Request a token first: python manage.py sso_verify_domain {provider_id} --request-token "
                f"(or POST {app_settings.base_path}/sso/request-domain-verification as the provider's owner), "
                "publish it as a DNS TXT record, then verify.")
