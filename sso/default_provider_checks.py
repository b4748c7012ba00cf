"""Start-up validation of the whole providers in ``AUTHSERVICE_SSO["default_sso"]`` (sso.default_providers).

The checks ``/sso/register`` applies to the same fields, in its order, so that a settings provider is
never one that registration would refuse. Discovery and metadata fetches do not run here (no network
at start-up): an OIDC item's missing endpoints are discovered at sign-in as for any row, and a SAML
item names its IdP inline (``idpMetadata.metadata`` or ``entityID`` + ``cert``).
"""

from authservice.errors import APIError, codes, validation_error
from sso import app_settings, default_providers, discovery, domains, hostnames, providers, saml_config
from sso.saml import validation as saml_validation


def _check(item):
    provider_id = default_providers.item_id(item)
    domains.check_provider_id(provider_id)
    if provider_id in (*providers.BUILT_IN_IDS, *providers.SOCIAL_IDS):
        raise APIError(422, codes.PROVIDER_ID_RESERVED)
    if not hostnames.indexable(item["domain"]):
        raise validation_error("[domain] names no valid hostname")
    provider = default_providers.build(item)
    if bool(provider.oidc_config) == bool(provider.saml_config):
        raise validation_error("[body] Provide either oidcConfig or samlConfig")
    if not provider.issuer:
        raise validation_error("[issuer] is required (the item's 'issuer', or its config's)")
    if provider.oidc_config:
        if not provider.oidc_config.get("clientId"):
            raise validation_error("[oidcConfig.clientId] is required")
        discovery.check_config_endpoints(provider.oidc_config)
        providers.check_secret_rules(provider_id, provider.oidc_config)
    else:
        saml_config.check_metadata_size(provider.saml_config)
        saml_config.validate(provider.saml_config)
        saml_validation.validate(provider.saml_config)


def problems():
    """``(index, provider_id, message)`` for each whole item a registration would refuse."""
    found, seen = [], set()
    whole = default_providers.items()
    for index, item in enumerate(app_settings.default_sso or ()):
        if not any(item is other for other in whole):
            continue
        provider_id = default_providers.item_id(item)
        if provider_id in seen:
            found.append((index, provider_id, "PROVIDER_ID_EXISTS: another item has this provider_id"))
            continue
        seen.add(provider_id)
        try:
            _check(item)
        except APIError as error:
            found.append((index, provider_id, f"{error.code}: {error.message}"))
        except Exception as error:  # noqa: BLE001 - a value so odd that a check failed is a problem too
            found.append((index, provider_id, f"the item could not be checked: {error!r}"))
    return found
