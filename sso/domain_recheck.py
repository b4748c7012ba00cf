"""Re-checking every domain's TXT record: ``manage.py sso_verify_domain --all`` (issue 14 §3).

A verified domain stays trusted after its record is removed unless the deployment asks otherwise:
DNS records get cleaned up by people who do not know what they were for, and un-verifying would stop
every sign-in of that domain at once. So the default only records *when* the record went missing
(``record_missing_since``, shown by the command and the admin); with
``domain_verification.unverify_on_missing_record`` on, the domain becomes ``failed`` and stops
routing, linking and creating users until its record is back and it is verified again.

A pending or failed domain whose record now matches its unexpired token is verified by the same
check, through the same write as ``verify-domain`` (``domains.record_outcome``: provider row locked,
domain list unchanged, one owner per domain).
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from authservice.errors import APIError
from sso import app_settings, domains, signals
from sso.errors import codes
from sso.models import SsoProvider, SsoProviderDomain

FOUND = "found"
MISSING = "missing"
UNVERIFIED = "unverified"
VERIFIED_NOW = "verified"
STILL_PENDING = "pending"
NO_TOKEN = "no-token"
CLAIMED = "claimed"
CHANGED = "changed"  # the provider or the domain changed while its record was looked up: nothing written


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
    """Look up ``row``'s record and record what was found; returns the result constant.

    The lookups are slow (up to 5 s each, on nameservers the providers' owners run), so anything read
    before them may be stale by the time they answer (I1): a row is promoted only through
    :func:`sso.domains.record_outcome` (provider row locked, domain list unchanged, the claim checked
    under the same lock), a vanished record un-verifies that one row only, and the flag is recomputed
    from the rows with the provider row locked. Nothing here reads ``domain_verified``.
    """
    ident = domains.identifier(provider.provider_id)
    verified = row.is_verified
    token = row.token if verified else domains.pending_token(row)
    if not token:
        # Verified before per-domain tokens existed (or by an admin): nothing to compare with.
        return NO_TOKEN
    values = domains.txt_values(domains.record_name(ident, row.domain), using)
    found = domains.record_matches(values, ident, token)
    now = timezone.now()
    if verified:
        return _recheck_verified(provider, row, token, found, now)
    if not found:
        # Never un-verifies: the row may have been verified (by verify-domain) while we looked.
        SsoProviderDomain.objects.filter(pk=row.pk).exclude(status=SsoProviderDomain.VERIFIED).update(
            status=SsoProviderDomain.FAILED, checked_at=now)
        return STILL_PENDING
    try:
        domains.record_outcome(provider, [row], [])
    except APIError as error:
        if error.code == codes.DOMAIN_CLAIMED:
            return CLAIMED
        if error.code == codes.SSO_PROVIDER_CHANGED:
            return CHANGED
        raise
    signals.domain_verified.send(sender=SsoProvider, provider=provider, domains=[row.domain])
    return VERIFIED_NOW


def _recheck_verified(provider, row, token, found, now):
    rows = SsoProviderDomain.objects.filter(pk=row.pk)
    if found:
        rows.update(checked_at=now, record_missing_since=None)
        return FOUND
    missing_since = row.record_missing_since or now
    if not app_settings.domain_verification.unverify_on_missing_record:
        rows.update(checked_at=now, record_missing_since=missing_since)
        return MISSING
    with transaction.atomic():
        locked = SsoProvider.objects.select_for_update().filter(pk=provider.pk).first()
        if locked is None:
            return CHANGED  # deleted meanwhile
        # This row only, and only while it is still the verified row whose record was looked up.
        changed = rows.filter(status=SsoProviderDomain.VERIFIED, token=token).update(
            status=SsoProviderDomain.FAILED, checked_at=now, record_missing_since=missing_since)
        locked.refresh_domain_verified()
    provider.domain_verified = locked.domain_verified
    if not changed:
        return CHANGED
    signals.domain_unverified.send(sender=SsoProvider, provider=provider, domain=row.domain)
    return UNVERIFIED
