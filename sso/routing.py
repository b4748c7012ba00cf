"""Which provider a sign-in by domain or e-mail goes to (sso.md §3 provider lookup; I1, I6).

- Cost (I6): the name is validated first (:mod:`sso.hostnames`: 253 characters, labels of 1-63,
  IDNA), then matched with one indexed query, ``domain IN (its suffixes)`` over
  :class:`~sso.models.SsoProviderDomain`. At most 127 exact values, whatever the input.
- Trust (I1): with domain verification on, only verified domains take part, each on its own
  (issue 14 §3: a provider's verified ``corp.com`` routes, its pending ``corp.de`` does not), and
  every domain of a provider from settings (``default_providers.for_hostname``, asked first). An unverified provider registered
  first for ``corp.com``, or for ``a.corp.com``, can then no longer capture the company's
  sign-ins; it stays reachable by its ``providerId`` alone, where ``DOMAIN_NOT_VERIFIED`` answers.
- The most specific entry wins: the longest matching suffix, then the oldest provider.
- Providers defined in settings (sso.default_providers) are asked first, as better-auth's
  defaultSSO is, and the rows they shadow (same id) never route. A row whose id is claimed otherwise
  (a social provider's, sso/provider_claims.py) answers 409 PROVIDER_ID_CONFLICT when it would win.
"""

from django.db.models.functions import Length

from sso import app_settings, default_providers, hostnames, provider_claims
from sso.models import SsoProviderDomain


def routing_hostname(domain=None, email=None):
    """The validated hostname a sign-in routes by: ``domain`` if given, else the e-mail's domain."""
    if domain:
        return hostnames.hostname(domain)
    return hostnames.email_domain(email)


def check_selectors(domain=None, email=None):
    """Refuse over-long selectors before any other work, whichever selector ends up used (I6)."""
    if domain is not None and (not isinstance(domain, str) or len(domain) > hostnames.MAX_HOSTNAME + 1):
        hostnames.hostname(domain if isinstance(domain, str) else None)  # raises INVALID_DOMAIN
    if email is not None and (not isinstance(email, str) or len(email) > hostnames.MAX_EMAIL):
        hostnames.email_domain(None)  # raises INVALID_EMAIL


def covering_entries(host):
    """The domain rows that cover ``host`` (a validated hostname) and may be trusted for it, most
    specific first (then the oldest provider), each annotated with ``length``.

    The one rule routing and membership by e-mail domain (sso/domain_membership.py) share.
    """
    entries = SsoProviderDomain.objects.filter(domain__in=hostnames.suffixes(host))
    shadowed = default_providers.ids()
    if shadowed:  # a row with the id of a settings provider is never used (sso.default_providers)
        entries = entries.exclude(provider__provider_id__in=shadowed)
    if app_settings.domain_verification.enabled:
        # Each row by its own status (I1). Never the provider's ``domain_verified``: that is a summary
        # of the rows, and a stale copy written back could set it over a pending row.
        # A row named by a domain-less default_sso item is no exception (SsoProvider.is_default).
        entries = entries.filter(status=SsoProviderDomain.VERIFIED)
    return (entries.select_related("provider").annotate(length=Length("domain"))
            .order_by("-length", "provider__created_at", "provider__id"))


def provider_for_hostname(host):
    """The provider whose most specific domain entry covers ``host`` (a validated hostname), or None.

    A provider from settings covering ``host`` comes first, as better-auth's defaultSSO does.
    """
    from_settings = default_providers.for_hostname(host)
    if from_settings is not None:
        return from_settings
    entry = covering_entries(host).first()
    provider = entry.provider if entry is not None else None
    # Refused rather than skipped, as for_hostname: falling through would route the domain elsewhere.
    provider_claims.refuse_row(provider)
    return provider
