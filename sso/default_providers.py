"""Providers defined in settings: ``AUTHSERVICE_SSO["default_sso"]``, better-auth's ``defaultSSO``.

An item with a ``domain`` is a whole provider. :func:`build` turns it into an unsaved, read-only
:class:`~sso.models.SsoProvider` that every flow accepts like a database row, and it takes precedence
over a row covering the same domain (:func:`for_hostname`), as better-auth looks in ``defaultSSO``
first. Its domains count as verified: the operator wrote them. It vouches only for those domains,
whatever domain verification says (I1).

An item without ``domain`` only lends its ``oidc_config.privateKey`` to the database row of its id
(sso/oidc/client_assertion.py). It no longer makes that row count as verified: the row's domains are
trusted by their own verification, as any row's (an attack pass registered such an id before the
deployment named it, then listed acme.com on it; tests/security/test_attack14_social_membership.py).

A row with the id of a whole item (a "shadowed row") can exist only if it was registered before the
operator named the id, possibly by an attacker. Everything keyed by that id (SSO accounts, the row's
SCIM connection) would otherwise carry over to the settings provider (I1; attack pass 14d,
tests/security/test_attack14d_*). So the two never work together: while such a row exists, the
settings provider is refused wherever a flow would use it (:func:`by_id`, :func:`for_hostname`, hence
sign-in, both OIDC callbacks, the ACS, SP metadata) with ``409 PROVIDER_ID_CONFLICT``, and the row stays
ignored. Deleting the row, which deletes its accounts on every path (sso/row_deletion.py), resolves it
(renaming cannot: ``provider_id`` is immutable); the system check ``sso.E019`` names such rows. The same
rule covers ids claimed in other ways, such as a social provider's (sso/provider_claims.py).
:func:`build` does not check: listing and start-up checks must not fail on it.

Items are validated at start-up by the checks ``/sso/register`` applies (sso/checks.py,
:func:`problems`), so a request never meets a bad one. Built per call, never cached: tests and
deployments may change the settings, and building is cheap.
"""

import logging

from authservice import db
from authservice.errors import APIError, codes
from sso import app_settings, hostnames, provider_claims
from sso import errors as _sso_errors  # noqa: F401 - defines PROVIDER_ID_CONFLICT, PROVIDER_FROM_SETTINGS
from sso.models import SsoProvider

logger = logging.getLogger("sso")

# The id of a settings provider (never a row's: generated ids have no colon). Deterministic, so a
# sign-in's state (providerRef.rowId) and a membership's managed_by stay valid across processes.
ID_PREFIX = "settings:"


def _get(item, snake, camel):
    return item.get(snake, item.get(camel))


def item_id(item):
    return item.get("provider_id") or item.get("providerId")


def items():
    """The whole-provider items (those with a domain), in settings order."""
    return [item for item in app_settings.default_sso or () if isinstance(item, dict) and item.get("domain")]


def ids():
    return {item_id(item) for item in items()}


def is_from_settings(provider):
    return getattr(provider, "from_settings", False)


def item_issuer(item):
    """The item's issuer: its own key, else its config's (better-auth accepts either)."""
    oidc, saml = _get(item, "oidc_config", "oidcConfig"), _get(item, "saml_config", "samlConfig")
    return item.get("issuer") or (oidc or saml or {}).get("issuer") or ""


def build(item):
    """The unsaved, read-only provider of ``item``; ``save()`` and ``delete()`` refuse it."""
    oidc, saml = _get(item, "oidc_config", "oidcConfig"), _get(item, "saml_config", "samlConfig")
    issuer = item_issuer(item)
    if oidc:
        oidc = {"pkce": True, "tokenEndpointAuthentication": "client_secret_basic", **oidc, "issuer": issuer,
                "overrideUserInfo": bool(item.get("overrideUserInfo") or oidc.get("overrideUserInfo"))}
    if saml:
        saml = {**saml, "issuer": issuer}
    provider = SsoProvider(
        id=ID_PREFIX + item_id(item), provider_id=item_id(item), issuer=issuer, domain=item["domain"],
        oidc_config=oidc or None, saml_config=saml or None, user=None,
        organization_id=_get(item, "organization_id", "organizationId") or None, domain_verified=True,
        organization_provisioning=_get(item, "organization_provisioning", "organizationProvisioning") or None)
    provider.from_settings = True
    return provider


def shadowed_rows(using=None):
    """The database rows in conflict: their ``provider_id`` is claimed by the deployment, a whole settings
    item's or another claim's (sso/provider_claims.py). What sso.E019 and ``sso_providers`` name."""
    return SsoProvider.objects.using(using).filter(provider_id__in=list(provider_claims.claims()))


def _usable(item):
    """``build(item)``, unless a row holds its id: then 409 and an error line for the operator."""
    provider_id = item_id(item)
    # One lookup on the unique provider_id index; only ever for an id that settings define.
    row_pk = next(iter(db.values(SsoProvider, "id", provider_id=provider_id)), None)
    if row_pk is not None:
        logger.error("SSO provider %r from settings refused: database row %s has the same provider_id. "
                     "Delete that row in the Django admin (the accounts linked through it are deleted with "
                     "it; its provider_id cannot be changed) to use the settings provider (system check "
                     "sso.E019).", provider_id, row_pk)
        raise APIError(409, codes.PROVIDER_ID_CONFLICT)
    return build(item)


def by_id(provider_id):
    """The settings provider named ``provider_id``, or None; 409 PROVIDER_ID_CONFLICT while a row has its id."""
    for item in items():
        if item_id(item) == provider_id:
            return _usable(item)
    return None


def find(provider_id, *, for_update=False):
    """The provider a sign-in, callback or ACS names: the settings one first (409 while a row shares its
    id), else the row (409 while the deployment claims its id for something else, sso.provider_claims)."""
    provider = by_id(provider_id)
    if provider is None:
        provider = db.get_row(SsoProvider, for_update=for_update, provider_id=provider_id)
        provider_claims.refuse_row(provider)
    return provider


def for_hostname(host):
    """The settings provider whose most specific domain covers ``host`` (validated), first item on a tie."""
    best, best_length = None, -1
    for item in items():
        for domain in hostnames.indexable(item["domain"]):
            if (host == domain or host.endswith("." + domain)) and len(domain) > best_length:
                best, best_length = item, len(domain)
    # Refused rather than skipped: falling through to the rows would route the domain elsewhere.
    return _usable(best) if best is not None else None


def refuse_management(provider_id):
    """get/update/delete-provider, verify-domain and SCIM tokens: a settings provider is the operator's."""
    if provider_id in ids():
        raise APIError(403, codes.PROVIDER_FROM_SETTINGS)
