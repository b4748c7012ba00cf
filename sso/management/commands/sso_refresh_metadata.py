"""Re-fetch the IdP metadata of SAML providers configured by URL (``samlConfig.idpMetadata.url``).

Meant for cron: one line per provider, and a non-zero exit status when any fetch failed, so the
scheduler reports it. A failed provider keeps its last good metadata.

A fetched document that changes the provider's identity (entity ID or signing keys) while accounts are
linked is refused like any other failure (I5: PROVIDER_IDENTITY_LOCKED). An administrator who has
checked the IdP's key rotation re-keys explicitly with ``--allow-rekey`` and named providers; each
re-key is logged (logger ``sso``, WARNING) as the audit record.
"""

from django.core.management.base import BaseCommand, CommandError

from authservice.errors import APIError
from sso import provider_claims
from sso.management import refusals
from sso.models import SsoProvider
from sso.saml import metadata_fetch


class Command(BaseCommand):
    help = "Re-fetch SAML IdP metadata from samlConfig.idpMetadata.url (all such providers, or the ones named)."

    def add_arguments(self, parser):
        parser.add_argument("provider_ids", nargs="*", metavar="providerId")
        parser.add_argument("--allow-rekey", action="store_true",
                            help="Accept new signing keys or entity ID for the named providers although "
                                 "accounts are linked (audited). Requires provider ids.")

    def _providers(self, provider_ids):
        query = SsoProvider.objects.exclude(saml_config__isnull=True).order_by("provider_id")
        # A row whose id the deployment claims is never used: nothing to refresh (sso.E019).
        query = query.exclude(provider_id__in=list(provider_claims.claims()))
        if provider_ids:
            for provider_id in provider_ids:
                refusals.refuse(provider_id, SsoProvider.objects.filter(provider_id=provider_id).first(),
                                prefix=f"{provider_id}: ")
            found = list(query.filter(provider_id__in=provider_ids))
            missing = sorted(set(provider_ids) - {provider.provider_id for provider in found})
            if missing:
                raise CommandError(f"No SAML provider: {', '.join(missing)}")
            unconfigured = [p.provider_id for p in found if not metadata_fetch.metadata_url(p.saml_config)]
            if unconfigured:
                raise CommandError(f"No samlConfig.idpMetadata.url: {', '.join(unconfigured)}")
            return found
        return [provider for provider in query if metadata_fetch.metadata_url(provider.saml_config)]

    def handle(self, *args, **options):
        failed = []
        allow_rekey = options["allow_rekey"]
        if allow_rekey and not options["provider_ids"]:
            # A re-key is a decision about one IdP, never a blanket switch for a cron line.
            raise CommandError("--allow-rekey needs the provider ids to re-key")
        providers = self._providers(options["provider_ids"])
        for provider in providers:
            try:
                changed = metadata_fetch.refresh(provider, allow_rekey=allow_rekey)
            except APIError as exc:
                failed.append(provider.provider_id)
                self.stderr.write(f"{provider.provider_id}: failed, kept the last good copy: {exc.code}: "
                                  f"{exc.message}")
                continue
            self.stdout.write(f"{provider.provider_id}: {'updated' if changed else 'unchanged'}")
        self.stdout.write(f"{len(providers)} provider(s), {len(failed)} failed")
        if failed:
            raise CommandError(f"Metadata refresh failed for: {', '.join(failed)}")
