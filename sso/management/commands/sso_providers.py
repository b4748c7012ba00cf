"""List every SSO provider with its domain-verification state (never truncated)."""

from django.core.management.base import BaseCommand

from authservice import users
from sso import default_providers, domains, provider_claims
from sso.models import SsoProvider


class Command(BaseCommand):
    help = "List SSO providers: providerId, type, domain, verification state, organization, owner."

    def handle(self, *args, **options):
        rows = [("PROVIDER", "TYPE", "DOMAIN", "VERIFIED", "ORGANIZATION", "OWNER")]
        for provider in SsoProvider.objects.select_related("user").order_by("provider_id"):
            verified = [row for row in domains.rows(provider) if domains.is_verified(provider, row)]
            if provider.domain_verified:
                state = "yes"
            elif verified:
                # Several domains, each verified on its own (issue 14 §3): how many so far.
                state = f"partly ({len(verified)}/{len(domains.rows(provider))})"
            else:
                state = "pending" if domains.pending_token(provider) else "no"
            rows.append((provider.provider_id, provider.type, provider.domain, state,
                         provider.organization_id or "-", users.email_of(provider.user)))
        widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            self.stdout.write("  ".join(str(value).ljust(width) for value, width in zip(row, widths)).rstrip())
        self.stdout.write(f"{len(rows) - 1} provider(s)")
        claims = provider_claims.claims()
        for provider_id in default_providers.shadowed_rows().values_list("provider_id", flat=True):
            self.stdout.write(self.style.ERROR(
                f"{provider_id}: claimed by {claims[provider_id]}; the row is refused (409 PROVIDER_ID_CONFLICT) "
                "until it is deleted (sso.E019)"))
