"""A provider's identity, and the lock on it while accounts are linked (I5, sso.md §2 update-provider).

A linked account trusts whatever the provider will sign in the future. So the identity is not only the
entity ID or issuer but the signing keys, and where those keys come from: ``idpMetadata.url`` for SAML,
the discovery URL and JWKS endpoint for OIDC (their keys are fetched live, so the source is what is
pinned). It is compared *after* any fetch: a metadata URL that now serves another IdP's metadata
changes the identity just as editing the certificate would.

Changing it while accounts are linked is refused with ``409 PROVIDER_IDENTITY_LOCKED``. The one way
past the lock is an administrator's explicit re-key (``sso_refresh_metadata --allow-rekey``), which
is logged as an audit record.
"""

import base64
import hashlib
import logging

from authservice.errors import APIError
from authservice.models import Account
from sso.errors import codes

logger = logging.getLogger("sso")


def is_linked(provider):
    """True while any account was created or linked through ``provider``."""
    return Account.objects.filter(provider_id=provider.provider_id).exists()


def account_key(config):
    """Which value keys a SAML account: None for the NameID, else the attribute ``mapping.id`` names.

    Part of the identity (I5 -> I1): re-pointing linked accounts at an attribute the IdP's users edit
    themselves (``displayName``) would let one user's assertion sign in as another.
    """
    mapping = config.get("mapping") if isinstance(config, dict) else None
    key = mapping.get("id") if isinstance(mapping, dict) else None
    return None if key in (None, "", "nameID") else key


def saml(config):
    """What a SAML provider's identity is made of: metadata URL, IdP entity ID, trusted signing keys,
    and which value keys its accounts.

    The keys are the very ones the ACS verifies with (``Settings.signing_certificates``: configured
    certificates, else the metadata's signing keys), so the lock guards what is used.
    """
    from sso.saml.config import Settings  # pysaml2 is loaded only where SAML is configured

    config = dict(config or {})
    settings = Settings(None, config)
    idp = settings.idp
    return {"url": idp.get("url") or None, "entityID": settings.idp_entity_id,
            "keys": sorted(set(settings.signing_certificates)), "accountKey": account_key(config)}


def check_unchanged(provider, before, after, *, allow_rekey=False):
    """409 when the SAML identity of ``after`` differs from ``before`` while accounts are linked.

    With ``allow_rekey`` (an administrator's explicit decision) the change passes and is logged.
    Returns True when the identity changed.
    """
    old, new = saml(before), saml(after)
    if old == new:
        return False
    if is_linked(provider):
        if not allow_rekey:
            raise APIError(409, codes.PROVIDER_IDENTITY_LOCKED)
        logger.warning("SSO provider %s re-keyed by an administrator while accounts are linked: "
                       "entityID %r -> %r, url %r -> %r, keys %s -> %s", provider.provider_id,
                       old["entityID"], new["entityID"], old["url"], new["url"],
                       _fingerprints(old["keys"]), _fingerprints(new["keys"]))
    return True


def _fingerprints(bodies):
    """Short SHA-256 fingerprints of the certificates (DER), for the audit line."""
    prints = []
    for body in bodies:
        try:
            der = base64.b64decode(body)
        except ValueError:
            der = body.encode()
        prints.append(hashlib.sha256(der).hexdigest()[:16])
    return prints
