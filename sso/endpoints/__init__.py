"""SSO endpoint declarations, one module per route group. Listed explicitly: no autodiscovery.

Each helper/feature adds ONE line here; ``SsoConfig.ready()`` imports them all.
"""

MODULES = [
    "sso.endpoints.providers",
    "sso.endpoints.domains",
    "sso.endpoints.organizations",
    "sso.endpoints.sign_in",
    "sso.endpoints.callback",
    "sso.endpoints.saml",
    "sso.endpoints.saml_logout",
    "sso.endpoints.scim",
]
