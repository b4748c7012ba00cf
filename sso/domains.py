"""Domain verification by DNS TXT record (sso.md §7).

The provider's owner publishes ``_auth-token-{providerId}.{domain}  TXT  "<token>"`` (or
``"_auth-token-{providerId}=<token>"``) for every domain of the provider; :func:`verify` looks the
records up with dnspython and compares in constant time. The token is a verification row with a
7-day expiry.

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
from authservice.models import Verification
from authservice.tokens import URL_SAFE, constant_time_equals, random_string
from sso import app_settings, hostnames, signals
from sso.errors import NO_RESOLVER_MESSAGE, codes, verification_failed_message
from sso.models import SsoProvider

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


def pending_token(provider):
    """The unexpired token of ``provider``, or ``None``."""
    row = (Verification.objects.filter(identifier=identifier(provider.provider_id),
                                       expires_at__gt=timezone.now()).order_by("-created_at").first())
    return row.value if row else None


def issue_token(provider):
    """A fresh token, replacing any older one of the same provider."""
    Verification.objects.filter(identifier=identifier(provider.provider_id)).delete()
    token = random_string(TOKEN_LENGTH, URL_SAFE)
    Verification.objects.create(
        identifier=identifier(provider.provider_id), value=token,
        expires_at=timezone.now() + timedelta(seconds=app_settings.domain_verification.token_expires_in))
    return token


def request_token(provider):
    """``request-domain-verification``: the unexpired token unchanged, else a new one."""
    if provider.domain_verified:
        raise APIError(409, codes.DOMAIN_VERIFIED)
    return pending_token(provider) or issue_token(provider)


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


def verify(provider):
    """Check every domain's TXT record and mark the provider verified (sso.md §7 verify-domain)."""
    if provider.domain_verified:
        raise APIError(409, codes.DOMAIN_VERIFIED)
    check_provider_id(provider.provider_id)  # a row stored before the rule: refused, no lookup
    ident = identifier(provider.provider_id)
    if len(ident) > DNS_LABEL_LIMIT:
        raise APIError(400, codes.IDENTIFIER_TOO_LONG)
    token = pending_token(provider)
    if token is None:
        raise APIError(404, codes.NO_PENDING_VERIFICATION)
    # Everything is checked before the first lookup: the count, every name, every record name's length.
    names = [(host, record_name(ident, host)) for host in hostnames.domain_list(provider.domain)]
    using = resolver()
    deadline = time.monotonic() + dns_timeout()
    for host, name in names:
        # One deadline for the request: each lookup gets what is left of it, at most DNS_LIFETIME.
        remaining = min(DNS_LIFETIME, deadline - time.monotonic())
        values = txt_values(name, using, remaining) if remaining > 0 else []
        if not record_matches(values, ident, token):
            raise APIError(502, codes.DOMAIN_VERIFICATION_FAILED, verification_failed_message(host))
    with transaction.atomic():
        # Conditional on the row and its domain being unchanged since the lookup started.
        updated = SsoProvider.objects.filter(pk=provider.pk, domain=provider.domain).update(
            domain_verified=True, updated_at=timezone.now())
        if not updated:
            raise APIError(409, codes.SSO_PROVIDER_CHANGED)
        Verification.objects.filter(identifier=ident).delete()
    provider.domain_verified = True
    signals.domain_verified.send(sender=SsoProvider, provider=provider)
    return provider
