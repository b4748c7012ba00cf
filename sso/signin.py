"""The protocol-neutral half of SSO sign-in (sso.md §3, §6, §8): which provider, which protocol, and
what happens once a protocol has verified an identity.

A protocol module provides ``start(ctx, provider, body) -> (url, cookie_key, state_key)``; OIDC is
``sso.oidc.client``, SAML plugs in as ``sso.saml.sign_in`` with the same signature and reuses the
state store (sso/state.py), :func:`complete` and the hooks.
"""

import importlib

from authservice import origins
from authservice.errors import APIError, codes, validation_error
from authservice.social.base import RESERVED_PARAMS
from sso import app_settings as sso_settings
from sso import errors as sso_errors
from sso import default_providers, linking, provider_claims, routing
from sso.models import Organization, SsoProvider

PROTOCOLS = {SsoProvider.OIDC: "sso.oidc.client", SsoProvider.SAML: "sso.saml.sign_in"}
URL_CHECKS = (("callbackURL", codes.INVALID_CALLBACK_URL),
              ("errorCallbackURL", codes.INVALID_ERROR_CALLBACK_URL),
              ("newUserCallbackURL", codes.INVALID_NEW_USER_CALLBACK_URL))


def check_request(body):
    """The URL fields and additionalParams (sso.md §3); the router checks URLs too, in-process calls not."""
    for key, code in URL_CHECKS:
        value = body.get(key)
        if value and not origins.is_allowed_url(value):
            raise APIError(403, code)
    reserved = [key for key in (body.get("additionalParams") or {}) if key in RESERVED_PARAMS]
    if reserved:
        raise validation_error("[body.additionalParams] additionalParams cannot include reserved "
                               f"OAuth parameters: {', '.join(reserved)}")


# --- which provider -------------------------------------------------------------------------------
def find_provider(*, provider_id=None, organization_slug=None, domain=None, email=None):
    """First match wins: providerId, organizationSlug, then the domain (given, or the e-mail's).

    Routing by domain lives in sso/routing.py: validated first, one indexed query, verified
    providers only when domain verification is on (I1, I6).
    """
    if not any((provider_id, organization_slug, domain, email)):
        raise APIError(400, codes.SSO_IDENTIFIER_REQUIRED)
    routing.check_selectors(domain=domain, email=email)
    if provider_id:
        return _found(default_providers.find(provider_id))
    if organization_slug:
        organization = Organization.objects.filter(slug=organization_slug).first()
        if organization is None and not (domain or email):
            raise APIError(400, codes.SSO_IDENTIFIER_REQUIRED, sso_errors.SSO_IDENTIFIER_ORG_MESSAGE)
        if organization is not None:
            rows = SsoProvider.objects.filter(organization_id=organization.pk)
            shadowed = default_providers.ids()
            if shadowed:  # a row with a settings provider's id never starts a sign-in (sso.default_providers)
                rows = rows.exclude(provider_id__in=shadowed)
            provider = rows.first()
            provider_claims.refuse_row(provider)
            if provider is not None or not (domain or email):
                return _found(provider)
    if not domain and "@" not in (email or ""):
        return _found(None)  # as better-auth: an address without a domain finds no provider
    return _found(routing.provider_for_hostname(routing.routing_hostname(domain=domain, email=email)))


def provider_for_domain(domain):
    """The provider routing by ``domain`` (a hostname, validated here) finds, or None."""
    return routing.provider_for_hostname(routing.routing_hostname(domain=domain))


def _found(provider):
    if provider is None:
        raise APIError(404, codes.PROVIDER_NOT_FOUND, sso_errors.NO_PROVIDER_FOR_ISSUER_MESSAGE)
    return provider


# --- which protocol -------------------------------------------------------------------------------
def protocol_of(provider, requested=None):
    """``oidc`` or ``saml``: the requested type when the provider has it, else the configured one."""
    if requested == SsoProvider.OIDC and not provider.oidc_config:
        raise APIError(400, codes.PROVIDER_TYPE_NOT_CONFIGURED)
    if requested == SsoProvider.SAML and not provider.saml_config:
        raise APIError(400, codes.PROVIDER_TYPE_NOT_CONFIGURED, sso_errors.SAML_NOT_CONFIGURED_MESSAGE)
    if requested:
        return requested
    if provider.oidc_config:
        return SsoProvider.OIDC
    if provider.saml_config:
        return SsoProvider.SAML
    raise APIError(400, codes.PROVIDER_TYPE_NOT_CONFIGURED)


def check_domain_verified(provider):
    if sso_settings.domain_verification.enabled and not provider.domain_trusted():
        raise APIError(401, codes.DOMAIN_NOT_VERIFIED)


def start(ctx, body):
    """Find the provider and hand over to its protocol; returns ``(url, cookie_key, state_key)``."""
    check_request(body)
    provider = find_provider(provider_id=body.get("providerId"), organization_slug=body.get("organizationSlug"),
                             domain=body.get("domain"), email=body.get("email"))
    protocol = protocol_of(provider, body.get("providerType"))
    check_domain_verified(provider)
    if protocol == SsoProvider.SAML and body.get("additionalParams"):
        raise APIError(400, codes.SAML_ADDITIONAL_PARAMS_UNSUPPORTED)
    try:
        module = importlib.import_module(PROTOCOLS[protocol])
    except ImportError:
        # SAML sign-in arrives with its own issue; until then its providers cannot start a sign-in.
        raise APIError(400, codes.PROVIDER_TYPE_NOT_CONFIGURED, sso_errors.SAML_NOT_CONFIGURED_MESSAGE) from None
    url, cookie_key, state_key = module.start(ctx, provider, body)
    # I4, checked again in the form the browser gets it, for both protocols: a row stored before the
    # register-time checks (or edited in the database) must not hand out a ``javascript:`` location.
    if not origins.is_http_url(url):
        raise APIError(400, codes.SSO_SIGN_IN_URL_INVALID)
    return url, cookie_key, state_key


# --- after the protocol -----------------------------------------------------------------------------
def complete(ctx, pending, identity):
    """Link or create, create the session, run provisionUser, add the membership (sso.md §8 steps 2-4).

    One call into the core external-identity flow (authservice/flows/external_identity.py), which
    holds is_active, domain trust (I1), linking, user creation and the provisioning hook for every
    protocol. Returns its ``SignedIn``. Raises ``linking.LinkRefused`` or a coded APIError, in which
    case no session exists afterwards (a hook's failure deletes the session it followed).
    """
    return linking.sign_in(ctx, pending.provider_ref, identity, request_sign_up=pending.request_sign_up)
