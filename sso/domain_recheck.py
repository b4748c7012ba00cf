"""Re-checking every domain's TXT record: ``manage.py sso_verify_domain --all`` (issue 14 §3).

A verified domain stays trusted after its record is removed unless the deployment asks otherwise:
DNS records get cleaned up by people who do not know what they were for, and un-verifying would stop
every sign-in of that domain at once. So the default only records *when* the record went missing
(``record_missing_since``, shown by the command and the admin); with
``domain_verification.unverify_on_missing_record`` on, the domain becomes ``failed`` and stops
routing, linking and creating users until its record is back and it is verified again.

A pending or failed domain whose record now matches its unexpired token is verified by the same
check, as ``verify-domain`` would.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from sso import app_settings, domains, signals
from sso.models import SsoProvider, SsoProviderDomain

FOUND = "found"
MISSING = "missing"
UNVERIFIED = "unverified"
VERIFIED_NOW = "verified"
STILL_PENDING = "pending"
NO_TOKEN = "no-token"
CLAIMED = "claimed"


@dataclass
class Outcome:
    provider_id: str
    domain: str
    result: str  # one of the constants above


def recheck_all(using=None):
    """Look up every domain of every provider once; yields an :class:`Outcome` per domain."""
    using = using or domains.resolver()
    providers = SsoProvider.objects.order_by("provider_id").prefetch_related("domain_entries")
    for provider in providers.iterator(chunk_size=200):
        if not domains.is_label_part(provider.provider_id):
            continue  # a row stored before the rule has no TXT record name
        for row in provider.domain_entries.all():
            yield Outcome(provider.provider_id, row.domain, recheck(provider, row, using))


def recheck(provider, row, using):
    """Look up ``row``'s record and record what was found; returns the result constant."""
    ident = domains.identifier(provider.provider_id)
    verified = domains.is_verified(provider, row)
    token = row.token if verified else domains.pending_token(row)
    if not token:
        # Verified before per-domain tokens existed (or by an admin): nothing to compare with.
        return NO_TOKEN
    values = domains.txt_values(domains.record_name(ident, row.domain), using)
    found = domains.record_matches(values, ident, token)
    now = timezone.now()
    if verified:
        return _recheck_verified(provider, row, found, now)
    if not found:
        SsoProviderDomain.objects.filter(pk=row.pk).update(status=SsoProviderDomain.FAILED, checked_at=now)
        return STILL_PENDING
    if domains.claimed_elsewhere(provider, row.domain):
        return CLAIMED
    with transaction.atomic():
        SsoProviderDomain.objects.filter(pk=row.pk).update(
            status=SsoProviderDomain.VERIFIED, verified_at=now, checked_at=now, record_missing_since=None)
        provider.refresh_domain_verified()
    signals.domain_verified.send(sender=SsoProvider, provider=provider, domains=[row.domain])
    return VERIFIED_NOW


def _recheck_verified(provider, row, found, now):
    rows = SsoProviderDomain.objects.filter(pk=row.pk)
    if found:
        rows.update(checked_at=now, record_missing_since=None)
        return FOUND
    missing_since = row.record_missing_since or now
    if not app_settings.domain_verification.unverify_on_missing_record:
        rows.update(checked_at=now, record_missing_since=missing_since)
        return MISSING
    with transaction.atomic():
        if provider.domain_verified:
            # The flag stood for every domain: the others stay verified, this one goes.
            SsoProviderDomain.objects.filter(provider=provider).exclude(pk=row.pk).update(
                status=SsoProviderDomain.VERIFIED)
        rows.update(status=SsoProviderDomain.FAILED, checked_at=now, record_missing_since=missing_since)
        provider.refresh_domain_verified()
    signals.domain_unverified.send(sender=SsoProvider, provider=provider, domain=row.domain)
    return UNVERIFIED
