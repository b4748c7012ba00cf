"""The SSO plugin's error codes (sso.md §2-§9), added to the core catalogue.

Import this module before using ``codes.<SSO code>``; ``SsoConfig.ready()`` does so through the
endpoint modules. Codes the core already defines (``PROVIDER_NOT_FOUND``, ``NO_FIELDS_TO_UPDATE``,
``UNAUTHORIZED``) are reused with the message of the use (see the ``*_MESSAGE`` constants).
"""

from authservice.errors import codes, define

for _code, _message in {
    # Provider management (§2).
    "SSO_REGISTRATION_DISABLED": "SSO provider registration is disabled",
    "PROVIDER_LIMIT_REACHED": "You have reached the maximum number of SSO providers",
    "SAML_METADATA_TOO_LARGE": "SAML metadata exceeds maximum allowed size",
    "NOT_ORGANIZATION_MEMBER": "You are not a member of the organization",
    "ORGANIZATION_ADMIN_REQUIRED": "You must be an organization owner or admin to register SSO providers",
    "PROVIDER_ID_RESERVED": "This providerId is reserved and cannot be used for an SSO provider",
    "PROVIDER_ID_EXISTS": "SSO provider with this providerId already exists",
    "INVALID_PROVIDER_ID": "providerId may contain only letters, digits, '-' and '_'",
    "PROVIDER_ACCESS_DENIED": "You don't have access to this provider",
    "PROVIDER_FROM_SETTINGS": "This provider is defined in the server's settings and cannot be changed here",
    "PROVIDER_ID_CONFLICT": (
        "The server's settings claim this providerId (a provider defined there, a social provider or a "
        "built-in sign-in method), and a stored provider has it too; it cannot be used until the operator "
        "deletes the stored one"
    ),
    # Ours (sso/issuers.py): the shared callback tells OIDC providers apart by their issuer alone.
    "ISSUER_IN_USE": "Another SSO provider uses this OIDC issuer with another token endpoint",
    "PROVIDER_CONFIG_TYPE_MISMATCH": (
        "Cannot update SAML config for a provider that doesn't have SAML configured"
    ),
    "PROVIDER_IDENTITY_LOCKED": "Cannot change SSO provider identity fields while linked accounts exist",
    "CLIENT_SECRET_REQUIRED": (
        "clientSecret is required when using client_secret_basic or client_secret_post authentication"
    ),
    "PRIVATE_KEY_RESOLVER_REQUIRED": (
        "private_key_jwt authentication requires either a resolvePrivateKey callback or a privateKey "
        "in defaultSSO"
    ),
    "CERT_SOURCE_MISSING": (
        "samlConfig requires either a signing certificate (cert or idpMetadata.cert) or an "
        "idpMetadata.metadata XML document."
    ),
    "SAML_IDP_ENTITY_ID_REQUIRED": "samlConfig.idpMetadata requires either metadata or entityID",
    "SAML_ENTRY_POINT_REQUIRED": "samlConfig.entryPoint is required",
    "SAML_INVALID_CERTIFICATE": "samlConfig.cert is not a valid PEM certificate",
    "SAML_INVALID_SP_METADATA": "Invalid SP metadata",
    "SAML_SP_METADATA_ASSERTION_SIGNATURE_MISMATCH": (
        "spMetadata WantAssertionsSigned does not match samlConfig.wantAssertionsSigned"
    ),
    "SAML_ALGORITHM_NOT_ALLOWED": "SAML algorithm not allowed",
    "SAML_UNKNOWN_ALGORITHM": "Unknown SAML algorithm",
    "SAML_DEPRECATED_CONFIG_ALGORITHM": "Deprecated SAML algorithm in configuration",
    "SAML_CONFIG_INVALID": "Invalid SAML configuration",
    "SAML_PROVIDER_NOT_FOUND": "No SAML provider found",
    # Discovery and server-side fetches (§4); lower-case, as better-auth sends them.
    "discovery_invalid_url": "Invalid OIDC discovery URL",
    "discovery_untrusted_origin": "Untrusted OIDC discovery URL",
    "discovery_private_host": "OIDC endpoint host is not publicly routable",
    "oidc_endpoint_redirect": "OIDC endpoint answered with a redirect",
    "discovery_not_found": "OIDC discovery endpoint not found",
    "discovery_invalid_json": "OIDC discovery returned invalid data",
    "discovery_incomplete": "OIDC discovery document is missing required fields",
    "issuer_mismatch": "OIDC issuer mismatch",
    "unsupported_token_auth_method": "Unsupported token endpoint authentication method",
    "discovery_timeout": "OIDC discovery timed out",
    "discovery_unexpected_error": "OIDC discovery failed",
    # Sign-in (§3).
    "SSO_IDENTIFIER_REQUIRED": "email, organizationSlug, domain or providerId is required",
    "PROVIDER_TYPE_NOT_CONFIGURED": "OIDC provider is not configured",
    "DOMAIN_NOT_VERIFIED": "Provider domain has not been verified",
    "SAML_ADDITIONAL_PARAMS_UNSUPPORTED": (
        "additionalParams is not supported for SAML providers; the SAML AuthnRequest is signed and "
        "cannot carry caller-supplied query parameters."
    ),
    "SAML_SIGNING_KEY_MISSING": (
        "authnRequestsSigned is enabled but no privateKey provided in spMetadata or samlConfig"
    ),
    # Domain verification (§7).
    "DOMAIN_VERIFIED": "Domain has already been verified",
    "IDENTIFIER_TOO_LONG": "Verification identifier exceeds the DNS label limit of 63 characters",
    "NO_PENDING_VERIFICATION": "No pending domain verification exists",
    "INVALID_DOMAIN": "Invalid domain",
    "DOMAIN_VERIFICATION_FAILED": "Unable to verify domain ownership. Try again later",
    "SSO_PROVIDER_CHANGED": "The SSO provider changed during the operation",
    # Several domains per provider (issue 14 §3; our own codes).
    "DOMAIN_NOT_LISTED": "The provider does not list this domain",
    "DOMAIN_CLAIMED": "This domain is already verified by another SSO provider",
    # Organizations (§8.1).
    "ORGANIZATION_ALREADY_EXISTS": "Organization already exists",
    "NO_ACTIVE_ORGANIZATION": "No active organization",
    "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION": "You are not a member of this organization",
    "ORGANIZATION_NOT_FOUND": "Organization not found",
    # IdP metadata fetched by URL (issue 7).
    "SAML_METADATA_URL_INVALID": "IdP metadata URL must be an https URL or lie in a trusted origin",
    "SAML_METADATA_URL_PRIVATE_HOST": "IdP metadata URL points to a host that is not publicly routable",
    "SAML_METADATA_FETCH_FAILED": "Failed to fetch IdP metadata",
    "SAML_INVALID_IDP_METADATA": "Invalid IdP metadata",
    # URL and metadata hygiene (issue 12: I3, I4).
    "SAML_METADATA_FOREIGN_CONTENT": (
        "SAML metadata may only hold SAML metadata, XML Signature and XML Encryption content"
    ),
    "SAML_URL_INVALID": "SAML locations and callback URLs must be http or https URLs",
    "SSO_SIGN_IN_URL_INVALID": "The provider's sign-in URL is not an http or https URL",
    # SAML Single Logout (issue 14 §2; better-auth's SAML_ERROR_CODES, docs/saml-slo.md). The reason a
    # logout message is refused is in the message: "Invalid LogoutRequest: <reason>".
    "SINGLE_LOGOUT_NOT_ENABLED": "Single Logout is not enabled",
    "INVALID_LOGOUT_RESPONSE": "Invalid LogoutResponse",
    "INVALID_LOGOUT_REQUEST": "Invalid LogoutRequest",
    "LOGOUT_FAILED_AT_IDP": "Logout failed at IdP",
    "IDP_SLO_NOT_SUPPORTED": "IdP does not support Single Logout Service",
    "SAML_LOGOUT_SIGNING_KEY_MISSING": (
        "Single Logout needs an SP signing key (spMetadata.privateKey) to sign the LogoutRequest"
    ),
    "SAML_LOGOUT_SESSION_NOT_SAML": "This session was not opened by a SAML sign-in with this provider",
    # SCIM (issue 14 §1).
    "SCIM_ORGANIZATION_MISMATCH": "The SSO provider does not belong to this organization",
    "SCIM_CONNECTION_NOT_FOUND": "SCIM provider not found",
}.items():
    define(_code, _message)

class RedirectError:
    """The ``?error=`` values of SSO error redirects (sso.md §9), raised as the one failure type
    ``authservice.flows.external_identity.SignInFailure``; the core flow's refusals (linking, sign-up,
    e-mail domain trust, inactive user) are in ``authservice.errors.OAuthCallbackError``."""

    # OIDC callback.
    STATE_NOT_FOUND = "state_not_found"
    STATE_MISMATCH = "state_mismatch"
    INVALID_REQUEST = "invalid_request"
    INVALID_PROVIDER = "invalid_provider"
    INVALID_STATE = "invalid_state"
    DISCOVERY_FAILED = "discovery_failed"
    # SAML ACS.
    SAML_ERROR = "saml_error"
    SAML_INVALID_ENCODING = "saml_invalid_encoding"
    SAML_INVALID_XML = "saml_invalid_xml"
    SAML_NO_ASSERTION = "saml_no_assertion"
    SAML_MULTIPLE_ASSERTIONS = "saml_multiple_assertions"
    INVALID_SAML_RESPONSE = "invalid_saml_response"
    UNSOLICITED_RESPONSE = "unsolicited_response"
    REPLAY_DETECTED = "replay_detected"


# Messages of a shared code in one particular use.
PROVIDER_NOT_FOUND_MESSAGE = "Provider not found"
NO_PROVIDER_FOR_ISSUER_MESSAGE = "No provider found for the issuer"
NO_PROVIDER_FOR_ID_MESSAGE = "No provider found for the given providerId"
NO_FIELDS_MESSAGE = "No fields provided for update"
SAML_NOT_CONFIGURED_MESSAGE = "SAML provider is not configured"
OIDC_CONFIG_TYPE_MISMATCH_MESSAGE = (
    "Cannot update OIDC config for a provider that doesn't have OIDC configured"
)
SSO_IDENTIFIER_ORG_MESSAGE = "providerId, orgId or domain is required"
NO_RESOLVER_MESSAGE = "No DNS resolver is available"


def metadata_too_large_message(which, limit):
    """``which`` is "IdP" or "SP"."""
    return f"{which} metadata exceeds maximum allowed size ({limit} bytes)"


def verification_failed_message(domain):
    return f"Unable to verify domain ownership for {domain}. Try again later"


__all__ = ["codes"]
