"""Endpoint declarations, one module per route group. Listed explicitly: no autodiscovery."""

MODULES = [
    "authservice.endpoints.core",
    "authservice.endpoints.email_password",
    "authservice.endpoints.session",
    "authservice.endpoints.user",
    "authservice.endpoints.accounts",
    "authservice.endpoints.verification",
    "authservice.endpoints.password",
    "authservice.endpoints.social",
    "authservice.endpoints.two_factor",
    "authservice.endpoints.passkey",
    "authservice.endpoints.openapi",
]
