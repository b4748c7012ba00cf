"""The SSO plugin's settings: one dict, ``settings.AUTHSERVICE_SSO``, read through this module only.

Every key has a default below, mirroring ``@better-auth/sso``'s option of the same name in snake_case
(sso.md §2, §5, §6, §7, §8). Nested dicts merge key by key over the defaults::

    AUTHSERVICE_SSO = {
        "domain_verification": {"enabled": True},
        "dns_nameservers": ["127.0.0.1:5353"],
        "organization_provisioning": {"default_role": "member"},
    }

Read as ``sso_settings.domain_verification.enabled``. Unknown keys are reported by ``sso.E001``.
"""

from django.utils.module_loading import import_string

from authservice.conf import NamespacedSettings
from authservice.setting_types import URL, Choice, DottedPath, Int, ListOf, Optional, Str
from sso.setting_shapes import DefaultProvider, Nameserver

DAY = 86400

DEFAULTS = {
    "domain_verification": {
        # Providers must prove their domain by a DNS TXT record before sign-in works (sso.md §7).
        "enabled": False,
        # Lifetime of a domain-verification token, seconds (better-auth: 7 days).
        "token_expires_in": 7 * DAY,
        # Seconds of DNS time one verify-domain request may spend, all its TXT lookups together (I6).
        "dns_timeout": 10,
        # When ``sso_verify_domain --all`` finds the TXT record of a verified domain gone: False only
        # records when it went missing; True also un-verifies the domain (it stops routing, linking
        # and creating users until verified again). docs/sso-domains.md.
        "unverify_on_missing_record": False,
    },
    # Nameservers for the TXT lookups: ["host", "host:port", ...]; empty = the system resolver.
    "dns_nameservers": [],
    # Providers one user may register; 0 disables the limit (better-auth: providersLimit 10).
    "providers_limit": 10,
    # Dotted path of ``resolve_private_key(provider=) -> (key_id, pem, algorithm)`` for
    # private_key_jwt client authentication; None = only keys given in default_sso.
    "resolve_private_key": None,
    "organization": {
        # The organization endpoints and organization-owned providers (sso.md §8.1).
        "enabled": False,
    },
    "organization_provisioning": {
        # Don't add users who sign in through an organization's provider to that organization.
        "disabled": False,
        # Role given to users added by an SSO sign-in: "member" or "admin".
        "default_role": "member",
        # Dotted path of ``get_role(user=, user_info=, token=, provider=) -> str``; None = default_role.
        "get_role": None,
    },
    # Dotted path of ``provision_user(user=, user_info=, token=, provider=, is_new_user=)``, run on
    # every SSO sign-in (sso.md §8 step 3); None = nothing.
    "provision_user": None,
    # Run provision_user (and send user_provisioned) on every SSO sign-in (our default, sso.md §8), or
    # only when the sign-in created the user (False: better-auth's default for provisionUserOnEveryLogin).
    "provision_user_on_every_login": True,
    # better-auth's redirectURI: one OIDC redirect URI for every provider instead of
    # {base}/sso/callback/{providerId}; the shared callback GET {base}/sso/callback reads the provider
    # from the sign-in's state. An absolute URL (say, a front end that proxies to that endpoint) or a
    # path under the base URL ("/sso/callback"). None: one redirect URI per provider. The shared callback
    # accepts only answers carrying RFC 9207's ``iss`` (the only defence against IdP mix-up when several
    # issuers share one redirect URI): use it with IdPs that send it.
    "redirect_uri": None,
    "account_linking": {
        # Auto-link to an existing user only when the local e-mail is verified (sso.md §6).
        "require_local_email_verified": True,
        # Trust the IdP's email_verified claim (better-auth: trustEmailVerified).
        "trust_email_verified": False,
    },
    # Provider ids allowed to sign in, link and create users of ANY e-mail domain although domain
    # verification is on (I1 opt-out; see the README's SSO section for why this is dangerous:
    # whoever controls such a provider can pre-hijack or take over accounts of every domain).
    # Without domain verification every provider already may (sso.md §6). A listed row trusts whoever
    # registered it: sso.W003 names each with its owner.
    "trust_any_email_domain": [],
    # Reject unknown users unless the sign-in asked for requestSignUp (sso.md §6.4).
    "disable_implicit_sign_up": False,
    # Providers defined in settings (better-auth: defaultSSO), checked at start-up (sso.E018); they take
    # precedence over stored providers, their ids are reserved and their domains count as verified. A
    # stored row with an item's id (or a social provider's, ...) is refused until it is deleted (sso.E019).
    # Each item: {"provider_id", "domain", "issuer", "oidc_config"|"saml_config", "organization_id"}.
    "default_sso": [],
    "saml": {
        # Accept a response only in answer to a request we sent (its InResponseTo), once.
        "enable_in_response_to_validation": True,
        # Accept responses the IdP sends unasked (IdP-initiated sign-in; no InResponseTo).
        "allow_idp_initiated": False,
        # Milliseconds an AuthnRequest waits for its response, as in better-auth.
        "request_ttl": 300_000,
        # Milliseconds of clock difference tolerated on NotBefore/NotOnOrAfter.
        "clock_skew": 300_000,
        # Refuse assertions without NotBefore/NotOnOrAfter conditions.
        "require_timestamps": False,
        "algorithms": {
            # "warn" (log, accept), "reject" or "allow" for deprecated algorithms.
            "on_deprecated": "warn",
            # Allow-lists replacing the deprecated/secure rules when set.
            "allowed_signature_algorithms": None,
            "allowed_digest_algorithms": None,
            "allowed_key_encryption_algorithms": None,
            "allowed_data_encryption_algorithms": None,
        },
        # Bytes: SAMLResponse measured on its base64 text; IdP/SP metadata at register and update.
        "max_response_size": 256 * 1024,
        "max_metadata_size": 100 * 1024,
        # Global post-login fallback for IdP-initiated responses.
        "idp_initiated_callback_url": None,
        # SAML Single Logout (docs/saml-slo.md): the two SLO endpoints and SingleLogoutService in SP
        # metadata (better-auth: saml.enableSingleLogout). Off: both endpoints answer 400.
        "enable_single_logout": False,
        # Milliseconds our LogoutRequest waits for the IdP's LogoutResponse (better-auth: logoutRequestTTL).
        "logout_request_ttl": 300_000,
        # Refuse an unsigned LogoutRequest / LogoutResponse from the IdP (better-auth:
        # wantLogoutRequestSigned / wantLogoutResponseSigned). A provider's samlConfig keys of the same
        # name override these per provider.
        "want_logout_request_signed": True,
        "want_logout_response_signed": True,
    },
    # Seconds for discovery and every server-side IdP fetch (sso.md §4).
    "discovery_timeout": 10,
    "scim": {
        # SCIM 2.0 provisioning under {base}/scim/v2/ and POST /scim/generate-token (docs/scim.md).
        "enabled": False,
        # Largest page a list answers (ServiceProviderConfig filter.maxResults); bigger counts are cut.
        # 100 (Okta's page size) keeps a page within I6's CPU budget: ~15 ms, ~50 ms with attributes.
        "max_results": 100,
        # Largest PATCH: operations in one request. Each costs up to ~0.6 ms of CPU (a user's are applied
        # by scim2-models in memory), so 100 keeps a request under I6's 100 ms; members ride in one
        # operation's value list, as Okta and Entra send them.
        "max_operations": 100,
    },
}

# What a key may hold where its default does not say it (authservice/setting_types.py); every other
# key must have its default's type. The system checks validate the project's values against these.
TYPES = {
    "domain_verification.dns_timeout": Int(number=True),
    "dns_nameservers": ListOf(Nameserver(), comma_separated=True),
    "providers_limit": Int(positive=False),
    "resolve_private_key": Optional(DottedPath("a dotted path to resolve_private_key(provider=)")),
    "organization_provisioning.default_role": Choice("member", "admin", check_id="sso.E002"),
    "organization_provisioning.get_role": Optional(DottedPath("a dotted path to get_role(user=, ...)")),
    "provision_user": Optional(DottedPath("a dotted path to provision_user(user=, ...)")),
    "redirect_uri": Optional(URL(relative=True)),
    "trust_any_email_domain": ListOf(Str()),
    "default_sso": ListOf(DefaultProvider()),
    "saml.clock_skew": Int(positive=False),
    "saml.algorithms.on_deprecated": Choice("warn", "reject", "allow", check_id="sso.E003"),
    "saml.algorithms.allowed_signature_algorithms": Optional(ListOf(Str())),
    "saml.algorithms.allowed_digest_algorithms": Optional(ListOf(Str())),
    "saml.algorithms.allowed_key_encryption_algorithms": Optional(ListOf(Str())),
    "saml.algorithms.allowed_data_encryption_algorithms": Optional(ListOf(Str())),
    "saml.idp_initiated_callback_url": Optional(URL(relative=True)),
    "discovery_timeout": Int(number=True),
}

_settings = NamespacedSettings("AUTHSERVICE_SSO", DEFAULTS)
unknown_keys = _settings.unknown_keys
namespace = _settings  # for the system checks and the settings reference


def __getattr__(name):
    return getattr(_settings.section(), name)


def callable_setting(value):
    """A callable from a dotted path (or a callable given directly); ``None`` stays ``None``."""
    if value is None or callable(value):
        return value
    return import_string(value)
