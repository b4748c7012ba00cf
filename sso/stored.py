"""Tolerant readers of a provider's stored JSON config (``oidc_config``, ``saml_config``).

Rows saved before the configs were typed at registration (issue 12) may hold any JSON in any key, and
a deployment may edit them in the admin: a value of the wrong type reads as absent, never a 500.
"""


def as_dict(value):
    return value if isinstance(value, dict) else {}


def as_list(value):
    return value if isinstance(value, list) else []


def as_str(value):
    return value if isinstance(value, str) else None
