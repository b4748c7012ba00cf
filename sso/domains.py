"""Domain verification by DNS TXT record (sso.md §7).

The provider's owner publishes ``_auth-token-{providerId}.{domain}  TXT  "<token>"`` (or
``"_auth-token-{providerId}=<token>"``) for every domain of the provider; :func:`verify` looks the
records up with dnspython and compares in constant time. The token is a verification row with a
7-day expiry.
"""

import socket
from datetime import timedelta
from urllib.parse import urlsplit

import dns.exception
import dns.nameserver
import dns.resolver
from django.db import transaction
from django.utils import timezone

from authservice.errors import APIError
from authservice.models import Verification
from authservice.tokens import URL_SAFE, constant_time_equals, random_string
from sso import app_settings, signals
from sso.errors import NO_RESOLVER_MESSAGE, codes, verification_failed_message
from sso.models import SsoProvider

PREFIX = "_auth-token-"  # SEED; better-auth uses "_better-auth-token-"
TOKEN_LENGTH = 24
DNS_LABEL_LIMIT = 63
DNS_LIFETIME = 5.0  # seconds for one TXT lookup, retries included


def enabled():
    return app_settings.domain_verification.enabled


def require_enabled():
    """The two endpoints exist only with domain verification on."""
    if not enabled():
        raise APIError(404, codes.NOT_FOUND)


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
    """A bare, lower-case hostname from ``domain`` (a scheme, path or port is dropped)."""
    value = (domain or "").strip()
    host = urlsplit(value if "://" in value else f"//{value}").hostname or ""
    host = host.rstrip(".").lower()
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise APIError(400, codes.INVALID_DOMAIN) from None
    labels = host.split(".")
    if not host or len(host) > 253 or any(not label or len(label) > DNS_LABEL_LIMIT for label in labels):
        raise APIError(400, codes.INVALID_DOMAIN)
    return host


def txt_values(name):
    """Every TXT record at ``name``, chunks joined and trimmed; ``[]`` when there is none."""
    try:
        answer = resolver().resolve(name, "TXT", raise_on_no_answer=False)
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
    ident = identifier(provider.provider_id)
    if len(ident) > DNS_LABEL_LIMIT:
        raise APIError(400, codes.IDENTIFIER_TOO_LONG)
    token = pending_token(provider)
    if token is None:
        raise APIError(404, codes.NO_PENDING_VERIFICATION)
    hosts = [normalize_domain(domain) for domain in provider.domain.split(",") if domain.strip()]
    if not hosts:
        raise APIError(400, codes.INVALID_DOMAIN)
    for host in hosts:
        if not record_matches(txt_values(f"{ident}.{host}"), ident, token):
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
