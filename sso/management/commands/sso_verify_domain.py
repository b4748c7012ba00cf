"""Verify a provider's domains from the shell: the same DNS TXT check as POST /sso/verify-domain.

- ``sso_verify_domain <providerId>`` checks every domain not yet verified, each against its own token,
  and prints the state of every domain (pending, verified, failed, last checked).
- ``--domain corp.de`` limits the check (or ``--request-token``) to that domain.
- ``--request-token`` issues the tokens (as POST /sso/request-domain-verification does) and prints
  the TXT records to publish; without a token the check has nothing to compare with.
- ``--all`` re-checks every domain of every provider and records when a verified domain's record
  disappeared (whether that un-verifies it is ``domain_verification.unverify_on_missing_record``).
"""

from django.core.management.base import BaseCommand, CommandError

from authservice import app_settings
from authservice.errors import APIError
from sso import domain_recheck, domains
from sso.errors import codes
from sso.management import refusals
from sso.models import SsoProvider


class Command(BaseCommand):
    help = ("Look up _auth-token-<providerId>.<domain> TXT records, mark each matching domain verified, "
            "and show every domain's state.")

    def add_arguments(self, parser):
        parser.add_argument("provider_id", nargs="?")
        parser.add_argument("--domain", help="Only this one of the provider's domains.")
        parser.add_argument("--request-token", action="store_true",
                            help="Issue tokens (or show the unexpired ones) and print the TXT records to "
                                 "publish, instead of checking them.")
        parser.add_argument("--all", action="store_true", dest="check_all",
                            help="Re-check every domain of every provider; report records that disappeared.")

    def handle(self, *args, provider_id=None, domain=None, request_token=False, check_all=False, **options):
        if check_all:
            if provider_id or domain or request_token:
                raise CommandError("--all takes no provider, --domain or --request-token")
            self.recheck_all()
            return
        if not provider_id:
            raise CommandError("Name a provider, or use --all")
        provider = SsoProvider.objects.filter(provider_id=provider_id).first()
        refusals.refuse(provider_id, provider)
        if provider is None:
            raise CommandError(f"No SSO provider {provider_id!r}")
        try:
            if request_token:
                _, rows = domains.request_token(provider, domain)
                self.print_records(provider, rows)
                return
            domains.verify(provider, domain)
        except APIError as error:
            self.print_states(provider)
            raise CommandError(f"{error.code}: {error.message}{self.next_step(error, provider_id)}") from None
        self.print_states(provider)
        self.stdout.write(self.style.SUCCESS(f"{provider_id}: verified"))

    def print_records(self, provider, rows):
        for row in rows:
            self.stdout.write(f'{domains.identifier(provider.provider_id)}.{row.domain}  TXT  "{row.token}"')
        self.stdout.write(f"Publish the records, then run: python manage.py sso_verify_domain {provider.provider_id}")

    def print_states(self, provider):
        """One line per domain: name, state, when it was last checked, a missing record."""
        provider.refresh_from_db()
        for row in domains.rows(provider):
            state = domains.describe(provider, row)
            line = f"  {state['domain']}: {state['status']}, last checked {state['checkedAt'] or 'never'}"
            if state["recordMissingSince"]:
                line += f", record missing since {state['recordMissingSince']}"
            self.stdout.write(line)

    def recheck_all(self):
        counts = {}
        for outcome in domain_recheck.recheck_all():
            counts[outcome.result] = counts.get(outcome.result, 0) + 1
            style = self.style.WARNING if outcome.result in (domain_recheck.MISSING, domain_recheck.UNVERIFIED) \
                else (lambda text: text)
            self.stdout.write(style(f"{outcome.provider_id} {outcome.domain}: {outcome.result}"))
        summary = ", ".join(f"{count} {result}" for result, count in sorted(counts.items())) or "no domains"
        self.stdout.write(f"Checked: {summary}")

    def next_step(self, error, provider_id):
        if error.code != codes.NO_PENDING_VERIFICATION:
            return ""
        return (f". Request a token first: python manage.py sso_verify_domain {provider_id} --request-token "
                f"(or POST {app_settings.base_path}/sso/request-domain-verification as the provider's owner), "
                "publish it as a DNS TXT record, then verify.")
