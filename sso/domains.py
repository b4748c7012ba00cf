"""Domain verification by DNS TXT record (sso.md §7).

The provider's owner publishes ``_auth-token-{providerId}.{domain}  TXT  "<token>"`` (or
``"_auth-token-{providerId}=<token>"``) for every domain of the provider; :func:`verify` looks the
records up with dnspython and compares in constant time. Each domain has its own token (7-day expiry)
and state on its :class:`~sso.models.SsoProviderDomain` row (issue 14 §3, docs/sso-domains.md).

Cost (I6): the list is bounded (``hostnames.MAX_DOMAINS``) and validated before the first lookup, and
the whole request shares one DNS deadline (``domain_verification.dns_timeout`` seconds), so a
provider with many domains, or a nameserver that never answers, cannot hold a worker for
5 s per domain.
"""

import re
import socket
import time
from datetime import timedelta

import dns.exception
import dns.name
import dns.nameserver
import dns.resolver
from django.db import transaction
from django.utils import timezone

from authservice.errors import APIError
from authservice.tokens import URL_SAFE, constant_time_equals, random_string
from sso import app_settings, hostnames, signals
from sso.errors import NO_RESOLVER_MESSAGE, codes, verification_failed_message
from sso.models import SsoProvider, SsoProviderDomain

PREFIX = "_auth-token-"  # SEED; better-auth uses "_better-auth-token-"
TOKEN_LENGTH = 24
DNS_LABEL_LIMIT = 63
# What one DNS label part may hold here: a dot or a backslash-escaped dot would split the record name
# into more labels (I1: ``x.team`` + ``corp.test`` is a name in the zone ``team.corp.test``), and
# whitespace, control or non-ASCII characters cannot be published as a TXT owner name at all.
LABEL_PART = re.compile(r"[A-Za-z0-9_-]+\Z")
DNS_LIFETIME = 5.0  # seconds for one TXT lookup at most, retries included


def enabled():
    return app_settings.domain_verification.enabled


def require_enabled():
    """The two endpoints exist only with domain verification on."""
    if not enabled():
        raise APIError(404, codes.NOT_FOUND)


def is_label_part(provider_id):
    """Whether ``provider_id`` can be (part of) exactly one DNS label."""
    return isinstance(provider_id, str) and LABEL_PART.match(provider_id) is not None


def check_provider_id(provider_id):
    """400 INVALID_PROVIDER_ID unless ``provider_id`` is one DNS label part (registration, verify)."""
    if not is_label_part(provider_id):
        raise APIError(400, codes.INVALID_PROVIDER_ID)


def identifier(provider_id):
    return f"{PREFIX}{provider_id}"


# --- tokens, one per domain (issue 14 §3) ----------------------------------------------------------
def rows(provider):
    """The provider's domain rows, in list order."""
    return list(SsoProviderDomain.objects.filter(provider=provider).order_by("position", "id"))


def row_for(provider, domain):
    """The row of ``domain`` (any form a list entry may take); 400 INVALID_DOMAIN, 404 DOMAIN_NOT_LISTED."""
    host = hostnames.entry_hostname(domain) if isinstance(domain, str) else hostnames.hostname(None)
    row = SsoProviderDomain.objects.filter(provider=provider, domain=host).first()
    if row is None:
        raise APIError(404, codes.DOMAIN_NOT_LISTED)
    return row


def is_verified(provider, row):
    """Whether the row is verified: its own status only (I1). The provider's ``domain_verified`` is
    a summary of the rows, read earlier and possibly stale; it never makes a row verified."""
    return row.status == SsoProviderDomain.VERIFIED


def _first_unverified(provider):
    return next((row for row in rows(provider) if not is_verified(provider, row)), None)


def pending_token(target):
    """The unexpired token of a domain row, or of a provider's first domain not yet verified (the
    one better-auth's single-token answers name); ``None`` when there is none."""
    row = _first_unverified(target) if isinstance(target, SsoProvider) else target
    if row is not None and row.token and row.token_expires_at and row.token_expires_at > timezone.now():
        return row.token
    return None


def issue_token(target):
    """A fresh token for a domain row, replacing the older one. Given a provider: fresh tokens for every
    domain not yet verified, returning the first one's (better-auth's one token)."""
    if isinstance(target, SsoProvider):
        tokens = [issue_token(row) for row in rows(target) if not is_verified(target, row)]
        return tokens[0] if tokens else None
    row = target
    row.token = random_string(TOKEN_LENGTH, URL_SAFE)
    row.token_expires_at = timezone.now() + timedelta(seconds=app_settings.domain_verification.token_expires_in)
    SsoProviderDomain.objects.filter(pk=row.pk).update(token=row.token, token_expires_at=row.token_expires_at)
    return row.token


def request_token(provider, domain=None):
    """``request-domain-verification``: for ``domain``, or for every domain not yet verified; an
    unexpired token is kept, else a new one is issued. Returns ``(first token, [rows])``; 409
    DOMAIN_VERIFIED when there is nothing left to verify."""
    targets = [row_for(provider, domain)] if domain is not None else rows(provider)
    targets = [row for row in targets if not is_verified(provider, row)]
    if not targets:
        raise APIError(409, codes.DOMAIN_VERIFIED)
    for row in targets:
        if pending_token(row) is None:
            issue_token(row)
    return targets[0].token, targets


def describe(provider, row):
    """One domain as the API, the command and the admin show it (the token is public: it goes in DNS)."""
    return {
        "domain": row.domain,
        "status": SsoProviderDomain.VERIFIED if is_verified(provider, row) else row.status,
        "txtRecord": f"{identifier(provider.provider_id)}.{row.domain}",
        "domainVerificationToken": None if is_verified(provider, row) else pending_token(row),
        "verifiedAt": row.verified_at.isoformat() if row.verified_at else None,
        "checkedAt": row.checked_at.isoformat() if row.checked_at else None,
        "recordMissingSince": row.record_missing_since.isoformat() if row.record_missing_since else None,
    }


# --- DNS -----------------------------------------------------------------------------------------
def _nameserver(entry):
    host, port = entry.strip(), 53
    if host.startswith("["):  # [v6]:port
        host, _, rest = host[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else 53
    elif host.count(":") == 1:
        host, port = host.split(":")
        port = int(port)
    try:
        address = socket.getaddrinfo(host, None)[0][4][0]
    except socket.gaierror:
        address = host
    return dns.nameserver.Do53Nameserver(address, port)


def resolver():
    """A dnspython resolver on the configured nameservers, else the system's."""
    entries = app_settings.dns_nameservers
    if isinstance(entries, str):
        entries = [part for part in entries.split(",") if part.strip()]
    try:
        found = dns.resolver.Resolver(configure=not entries)
    except dns.resolver.NoResolverConfiguration:
        raise APIError(500, codes.DOMAIN_VERIFICATION_FAILED, NO_RESOLVER_MESSAGE) from None
    if entries:
        found.nameservers = [_nameserver(entry) for entry in entries]
    found.lifetime = DNS_LIFETIME
    return found


def normalize_domain(domain):
    """A bare, lower-case ASCII hostname from a domain-list entry (a scheme, path or port is dropped)."""
    return hostnames.entry_hostname(domain or "")


def dns_timeout():
    """The DNS time one verify-domain request may spend, all lookups together."""
    return float(app_settings.domain_verification.dns_timeout)


def record_name(ident, host):
    """``{ident}.{host}`` as a DNS name, built from labels: ``ident`` is exactly one label, so the record
    is always a direct child of ``host`` (I1). 400 when ``ident`` is not one label part, or the name
    cannot be one (too long, an empty label)."""
    if not is_label_part(ident):
        raise APIError(400, codes.INVALID_PROVIDER_ID)
    if len(ident) + 1 + len(host) > hostnames.MAX_HOSTNAME:
        raise APIError(400, codes.INVALID_DOMAIN)
    try:
        parent = dns.name.from_text(host)
        return dns.name.Name((ident.encode("ascii"),) + parent.labels)
    except (dns.exception.DNSException, ValueError):
        raise APIError(400, codes.INVALID_DOMAIN) from None


def txt_values(name, using=None, lifetime=DNS_LIFETIME):
    """Every TXT record at ``name``, chunks joined and trimmed; ``[]`` when there is none, or none came
    within ``lifetime`` seconds."""
    try:
        answer = (using or resolver()).resolve(name, "TXT", raise_on_no_answer=False, lifetime=lifetime)
    except (dns.resolver.NXDOMAIN, dns.resolver.NoNameservers, dns.exception.Timeout):
        return []
    return [b"".join(record.strings).decode("utf-8", "replace").strip() for record in answer]


def record_matches(values, ident, token):
    return any(constant_time_equals(value, token) or constant_time_equals(value, f"{ident}={token}")
               for value in values)


def claimed_elsewhere(provider, host):
    """Whether another provider already verified ``host`` (issue 14 §3: one owner per domain): a
    verified row of that hostname, by the row's own status, never the provider-wide flag."""
    return (SsoProviderDomain.objects.filter(domain=host, status=SsoProviderDomain.VERIFIED)
            .exclude(provider=provider).exists())


def verify(provider, domain=None):
    """Check the TXT record of ``domain``, or of every domain not yet verified, each against its own
    token (sso.md §7 verify-domain, issue 14 §3).

    Each domain's outcome is recorded on its own: those whose record matches become verified, the
    others failed. Then, as in better-auth, 502 DOMAIN_VERIFICATION_FAILED names the first that did
    not match (for a one-domain provider this is exactly better-auth's behaviour).
    """
    check_provider_id(provider.provider_id)  # a row stored before the rule: refused, no lookup
    ident = identifier(provider.provider_id)
    if len(ident) > DNS_LABEL_LIMIT:
        raise APIError(400, codes.IDENTIFIER_TOO_LONG)
    # Everything is checked before the first lookup: the count, every name, every record name's length.
    hostnames.domain_list(provider.domain)
    targets = [row_for(provider, domain)] if domain is not None else rows(provider)
    targets = [row for row in targets if not is_verified(provider, row)]
    if not targets:
        raise APIError(409, codes.DOMAIN_VERIFIED)
    if any(pending_token(row) is None for row in targets):
        raise APIError(404, codes.NO_PENDING_VERIFICATION)
    for row in targets:
        if claimed_elsewhere(provider, row.domain):
            raise APIError(409, codes.DOMAIN_CLAIMED)
    names = [(row, record_name(ident, row.domain)) for row in targets]
    using = resolver()
    deadline = time.monotonic() + dns_timeout()
    passed, failed = [], []
    for row, name in names:
        # One deadline for the request: each lookup gets what is left of it, at most DNS_LIFETIME.
        remaining = min(DNS_LIFETIME, deadline - time.monotonic())
        values = txt_values(name, using, remaining) if remaining > 0 else []
        (passed if record_matches(values, ident, row.token) else failed).append(row)
    record_outcome(provider, passed, failed)
    if passed:
        signals.domain_verified.send(sender=SsoProvider, provider=provider,
                                     domains=[row.domain for row in passed])
    if failed:
        raise APIError(502, codes.DOMAIN_VERIFICATION_FAILED, verification_failed_message(failed[0].domain))
    return provider


def record_outcome(provider, passed, failed):
    """Write the lookups' results, conditional on the provider's domain list being unchanged since the
    lookups started (the provider row is locked), and the flag recomputed from the rows. Refused with
    DOMAIN_CLAIMED when another provider verified one of the passed domains meanwhile. The one place
    a lookup promotes a row: ``verify-domain`` and the ``--all`` re-check both come here, so the
    once-only claim is made under one lock and one rule."""
    now = timezone.now()
    with transaction.atomic():
        locked = SsoProvider.objects.select_for_update().filter(pk=provider.pk, domain=provider.domain).first()
        if locked is None:
            raise APIError(409, codes.SSO_PROVIDER_CHANGED)
        # Every provider's row of these hostnames is locked (in one order, so no deadlock): two
        # providers verifying one domain at once queue here, and the second sees the first's claim.
        hosts = [row.domain for row in passed]
        list(SsoProviderDomain.objects.select_for_update().filter(domain__in=hosts).order_by("pk"))
        for host in hosts:
            if claimed_elsewhere(provider, host):
                raise APIError(409, codes.DOMAIN_CLAIMED)
        SsoProviderDomain.objects.filter(pk__in=[row.pk for row in passed]).update(
            status=SsoProviderDomain.VERIFIED, verified_at=now, checked_at=now, record_missing_since=None)
        # A failed lookup of a row that was not verified never un-verifies it: another request may
        # have verified it meanwhile.
        SsoProviderDomain.objects.filter(pk__in=[row.pk for row in failed]).exclude(
            status=SsoProviderDomain.VERIFIED).update(status=SsoProviderDomain.FAILED, checked_at=now)
        locked.refresh_domain_verified()
        SsoProvider.objects.filter(pk=provider.pk).update(updated_at=now)
    provider.domain_verified = locked.domain_verified
