"""Provider management: register, read, update, delete (sso.md §2). Logic only; endpoints shape answers.

Registration runs its checks in the spec's order and writes nothing until all of them pass.
"""

from django.db import IntegrityError, transaction

from authservice import app_settings as core_settings
from authservice.errors import APIError, validation_error
from authservice.models import Account, Verification
from sso import (
    app_settings, default_providers, discovery, domains, identity, issuers, organizations, provider_claims,
    saml_config, signals,
)
from sso.errors import NO_FIELDS_MESSAGE, OIDC_CONFIG_TYPE_MISMATCH_MESSAGE, codes
from sso.models import SsoProvider
from sso.saml import metadata_fetch
from sso.saml import validation as saml_validation

# Ids of other sign-in methods and better-auth's social ids (sso.md §2): defined with the conflict rule.
BUILT_IN_IDS, SOCIAL_IDS = provider_claims.BUILT_IN_IDS, provider_claims.SOCIAL_IDS
SECRET_METHODS = ("client_secret_basic", "client_secret_post")
# Changes refused while accounts are linked to the provider (sso.md §2 update-provider); for SAML also
# the account key (``mapping.id``, sso.identity.account_key). OIDC accounts are always keyed by ``sub``.
OIDC_IDENTITY_KEYS = ("clientId", "discoveryEndpoint", *discovery.ENDPOINT_KEYS)
SAML_IDENTITY_KEYS = ("audience", "callbackUrl", "entryPoint", "identifierFormat", "cert",
                      "wantAssertionsSigned")
# idpMetadata.url is where the keys come from (I5): changing it alone would swap them at the fetch.
SAML_IDP_IDENTITY_KEYS = ("url", "metadata", "entityID", "singleSignOnService", "cert")
SAML_SP_IDENTITY_KEYS = ("metadata", "entityID", "isAssertionEncrypted")


def reserved_ids():
    # Ids opted out of e-mail domain trust (trust_any_email_domain) are reserved too: whoever
    # registered such an id first would otherwise vouch for every address (I1).
    default_ids = [item.get("provider_id") or item.get("providerId") for item in app_settings.default_sso]
    return {*BUILT_IN_IDS, *SOCIAL_IDS, *core_settings.social_providers,
            *core_settings.account_linking.trusted_providers, *filter(None, default_ids),
            *(app_settings.trust_any_email_domain or ())}


def _can_admin(user, provider):
    if provider.organization_id and organizations.enabled():
        return organizations.is_owner_or_admin(user, provider.organization_id)
    return provider.user_id == user.pk


def get_for(user, provider_id):
    """The access rule of get/update/delete/domain verification (sso.md §2). A provider from settings
    (or the row it shadows) is the operator's: 403 PROVIDER_FROM_SETTINGS for everyone. A row whose id
    the deployment claims otherwise is 409 PROVIDER_ID_CONFLICT, to its owner too: deleting it would
    delete the claiming provider's accounts (sso/provider_claims.py)."""
    default_providers.refuse_management(provider_id)
    provider = SsoProvider.objects.filter(provider_id=provider_id).first()
    if provider is None:
        raise APIError(404, codes.PROVIDER_NOT_FOUND)
    if not _can_admin(user, provider):
        raise APIError(403, codes.PROVIDER_ACCESS_DENIED)
    provider_claims.refuse_row(provider)
    return provider


def visible_to(user):
    """Every provider the caller may manage, untruncated."""
    query = SsoProvider.objects.filter(user=user)
    if organizations.enabled():
        query = SsoProvider.objects.filter(user=user, organization_id__isnull=True) | SsoProvider.objects.filter(
            organization_id__in=organizations.admin_organization_ids(user))
    return list(query.distinct().order_by("created_at", "id"))


# --- register -------------------------------------------------------------------------------------
def _check_limit(user):
    limit = app_settings.providers_limit
    if not limit:
        raise APIError(403, codes.SSO_REGISTRATION_DISABLED)
    if SsoProvider.objects.filter(user=user).count() >= limit:
        raise APIError(403, codes.PROVIDER_LIMIT_REACHED)


def _check_organization(user, organization_id):
    member = organizations.membership(user, organization_id)
    if member is None:
        raise APIError(400, codes.NOT_ORGANIZATION_MEMBER)
    if not member.is_owner_or_admin:
        raise APIError(403, codes.ORGANIZATION_ADMIN_REQUIRED)


def _check_provider_id(provider_id):
    # One DNS label part: it names the domain-verification TXT record (I1) and sits unescaped in
    # callback paths, so a dot, backslash, slash or control character must never get in.
    domains.check_provider_id(provider_id)
    if provider_id in reserved_ids():
        raise APIError(422, codes.PROVIDER_ID_RESERVED)
    if SsoProvider.objects.filter(provider_id=provider_id).exists():
        raise APIError(422, codes.PROVIDER_ID_EXISTS)
    if Account.objects.filter(provider_id=provider_id).exists():
        # Accounts of a provider that is gone (a default_sso item the operator removed, a row deleted
        # by raw SQL): a new row of that id would inherit their (provider, subject) links (I1).
        raise APIError(422, codes.PROVIDER_ID_RESERVED)


def _has_private_key_source(provider_id):
    if app_settings.resolve_private_key:
        return True
    return any((item.get("provider_id") or item.get("providerId")) == provider_id
               and (item.get("oidc_config") or item.get("oidcConfig") or {}).get("privateKey")
               for item in app_settings.default_sso)


def check_secret_rules(provider_id, config):
    method = config.get("tokenEndpointAuthentication") or "client_secret_basic"
    if method in SECRET_METHODS and not config.get("clientSecret"):
        raise APIError(400, codes.CLIENT_SECRET_REQUIRED)
    if method == "private_key_jwt" and not _has_private_key_source(provider_id):
        raise APIError(400, codes.PRIVATE_KEY_RESOLVER_REQUIRED)


def build_oidc_config(provider_id, issuer, given, override_user_info=False):
    """The ``oidcConfig`` to store: given values, then discovery (unless skipped), then defaults."""
    config = {key: value for key, value in given.items() if key != "skipDiscovery" and value is not None}
    config["issuer"] = issuer
    config.setdefault("pkce", True)
    config["overrideUserInfo"] = bool(override_user_info)
    discovery.check_config_endpoints(config)
    if not given.get("skipDiscovery"):
        config = discovery.discover(issuer, config)
    config.setdefault("discoveryEndpoint", discovery.discovery_url(issuer))
    config.setdefault("tokenEndpointAuthentication", "client_secret_basic")
    return config


def build_saml_config(issuer, given):
    # A config naming only idpMetadata.url gets the fetched document before the checks run.
    config = metadata_fetch.hydrate(dict(given))
    config["issuer"] = issuer
    saml_config.validate(config)
    saml_validation.validate(config)
    return config


def register(found, body):
    """A new provider for the caller; returns ``(provider, domain verification token or None)``."""
    user = found.user
    oidc_given, saml_given = body.get("oidcConfig"), body.get("samlConfig")
    if bool(oidc_given) == bool(saml_given):
        raise validation_error("[body] Provide either oidcConfig or samlConfig")
    _check_limit(user)
    saml_config.check_metadata_size(saml_given)
    if body.get("organizationId"):
        _check_organization(user, body["organizationId"])
    _check_provider_id(body["providerId"])
    oidc = saml = None
    if oidc_given:
        oidc = build_oidc_config(body["providerId"], body["issuer"], oidc_given, body.get("overrideUserInfo"))
        issuers.check_available(body["issuer"], body["providerId"], oidc)
        check_secret_rules(body["providerId"], oidc)
    else:
        saml = build_saml_config(body["issuer"], saml_given)
    try:
        with transaction.atomic():
            provider = SsoProvider.objects.create(
                provider_id=body["providerId"], issuer=body["issuer"], domain=body["domain"],
                oidc_config=oidc, saml_config=saml, user=user,
                organization_id=body.get("organizationId") or None, domain_verified=False,
                organization_provisioning=body.get("organizationProvisioning") or None)
            token = domains.issue_token(provider) if domains.enabled() else None
    except IntegrityError:  # the same providerId registered concurrently
        raise APIError(422, codes.PROVIDER_ID_EXISTS) from None
    signals.provider_registered.send(sender=SsoProvider, provider=provider, user=user)
    return provider, token


# --- update -------------------------------------------------------------------------------------
def _merge_saml(current, updates):
    merged = dict(current)
    for key, value in updates.items():
        if key in ("idpMetadata", "spMetadata") and isinstance(value, dict):
            merged[key] = {**(current.get(key) or {}), **value}
        elif key == "idpInitiatedCallbackUrl" and value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def _changed(before, after, keys):
    return any(before.get(key) != after.get(key) for key in keys)


def _identity_changed(provider, issuer, oidc, saml):
    if issuer != provider.issuer:
        return True
    if oidc is not None and _changed(provider.oidc_config or {}, oidc, OIDC_IDENTITY_KEYS):
        return True
    if saml is not None:
        before = provider.saml_config or {}
        return (_changed(before, saml, SAML_IDENTITY_KEYS)
                or identity.account_key(before) != identity.account_key(saml)
                or _changed(before.get("idpMetadata") or {}, saml.get("idpMetadata") or {},
                            SAML_IDP_IDENTITY_KEYS)
                or _changed(before.get("spMetadata") or {}, saml.get("spMetadata") or {},
                            SAML_SP_IDENTITY_KEYS))
    return False


def update(found, body):
    """Apply a partial update; discovery does not run again (sso.md §2).

    The checks and the slow part (a SAML ``idpMetadata.url`` fetch from a server the caller may run)
    work on an unlocked copy. The write then locks the provider row, re-reads it and writes only the
    columns this update changes (:func:`_write`): a stale copy never writes back ``domain`` or
    ``domain_verified`` that another request changed meanwhile (I1).
    """
    if not any(body.get(key) is not None for key in ("issuer", "domain", "oidcConfig", "samlConfig")) \
            and "organizationProvisioning" not in body:
        raise APIError(400, codes.NO_FIELDS_TO_UPDATE, NO_FIELDS_MESSAGE)
    provider = get_for(found.user, body["providerId"])
    if body.get("oidcConfig") is not None and not provider.oidc_config:
        raise APIError(400, codes.PROVIDER_CONFIG_TYPE_MISMATCH, OIDC_CONFIG_TYPE_MISMATCH_MESSAGE)
    if body.get("samlConfig") is not None and not provider.saml_config:
        raise APIError(400, codes.PROVIDER_CONFIG_TYPE_MISMATCH)
    saml_config.check_metadata_size(body.get("samlConfig"))
    issuer = body.get("issuer") or provider.issuer
    oidc = saml = None
    if body.get("oidcConfig") is not None:
        changes = {k: v for k, v in body["oidcConfig"].items() if k != "skipDiscovery"}
        oidc = {**provider.oidc_config, **changes, "issuer": issuer}
    elif provider.oidc_config and issuer != provider.issuer:
        oidc = {**provider.oidc_config, "issuer": issuer}
    if body.get("samlConfig") is not None:
        saml = {**_merge_saml(provider.saml_config, body["samlConfig"]), "issuer": issuer}
    # Refused before any fetch when a locked field is named; compared again after the fetch below.
    if _identity_changed(provider, issuer, oidc, saml) and identity.is_linked(provider):
        raise APIError(409, codes.PROVIDER_IDENTITY_LOCKED)
    if oidc is not None:
        if issuer != provider.issuer or oidc.get("tokenEndpoint") != provider.oidc_config.get("tokenEndpoint"):
            issuers.check_available(issuer, provider.provider_id, oidc)
        discovery.check_config_endpoints(oidc)
        check_secret_rules(provider.provider_id, oidc)
    if saml is not None:
        saml = metadata_fetch.hydrate(saml, previous=provider.saml_config)
        saml_config.validate(saml)
        saml_validation.validate(saml)
        # I5: the identity of what will be stored, fetched metadata included.
        identity.check_unchanged(provider, provider.saml_config, saml)
    changes = {"issuer": issuer}
    if oidc is not None:
        changes["oidc_config"] = oidc
    if saml is not None:
        changes["saml_config"] = saml
    if "organizationProvisioning" in body:
        changes["organization_provisioning"] = body["organizationProvisioning"] or None
    provider = _write(found.user, provider, changes, body.get("domain"), linked_check=(issuer, oidc, saml))
    if body.get("domain") is not None and domains.enabled():
        for row in domains.rows(provider):
            if not domains.is_verified(provider, row) and domains.pending_token(row) is None:
                domains.issue_token(row)
    signals.provider_updated.send(sender=SsoProvider, provider=provider)
    return provider


# The columns an update rebuilds from the copy it read: written only if nobody changed them meanwhile.
MERGED_COLUMNS = ("issuer", "oidc_config", "saml_config")


def _write(user, read, changes, domain, linked_check):
    """Write ``changes`` (column -> value) and ``domain`` with the provider row locked and re-read.

    - 409 SSO_PROVIDER_CHANGED when another update changed a column this one merged its values into
      (``issuer``, ``oidc_config``, ``saml_config``) after it was read: its checks ran on old values.
    - The access rule and the identity lock (I5) are checked again on the locked row: a sign-in that
      linked an account meanwhile held this lock while it did.
    - ``domain`` is compared with the locked row's list, not the copy's; ``domain_verified`` is never
      written here: :meth:`SsoProvider.save` recomputes it from the rows when the list changes.
    """
    with transaction.atomic():
        current = SsoProvider.objects.select_for_update().filter(pk=read.pk).first()
        if current is None:
            raise APIError(404, codes.PROVIDER_NOT_FOUND)
        if not _can_admin(user, current):
            raise APIError(403, codes.PROVIDER_ACCESS_DENIED)
        if any(getattr(current, column) != getattr(read, column) for column in MERGED_COLUMNS if column in changes):
            raise APIError(409, codes.SSO_PROVIDER_CHANGED)
        if _identity_changed(current, *linked_check) and identity.is_linked(current):
            raise APIError(409, codes.PROVIDER_IDENTITY_LOCKED)
        fields = [column for column, value in changes.items() if getattr(current, column) != value]
        for column in fields:
            setattr(current, column, changes[column])
        if domain is not None and domain != current.domain:
            # save() keeps the state of domains that stay; new ones start pending with their own token,
            # and domain_verified is recomputed from the rows (issue 14 §3).
            current.domain = domain
            fields.append("domain")
        current.save(update_fields=[*fields, "updated_at"])
    return current


def delete(found, provider_id):
    """The provider, every account linked through it, and its pending domain token. Users stay."""
    provider = get_for(found.user, provider_id)
    with transaction.atomic():
        Account.objects.filter(provider_id=provider.provider_id).delete()
        Verification.objects.filter(identifier=domains.identifier(provider.provider_id)).delete()
        provider.delete()
    signals.provider_deleted.send(sender=SsoProvider, provider_id=provider_id, user=found.user)
