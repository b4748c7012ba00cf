"""Providers by id, built from ``AUTHSERVICE["social_providers"]`` (core.md §5.0).

An entry's key is the provider id. Its class is, in order: the dotted path in ``"class"`` (a project's
own subclass), the generic OIDC provider for ``"type": "oidc"``, the built-in named by ``"type"`` or by
the key itself. ``"enabled": false`` hides an entry.
"""

from django.utils.module_loading import import_string

from authservice import app_settings
from authservice.social.oidc import GenericOIDCProvider
from authservice.social.providers.apple import AppleProvider
from authservice.social.providers.discord import DiscordProvider
from authservice.social.providers.github import GitHubProvider
from authservice.social.providers.gitlab import GitLabProvider
from authservice.social.providers.google import GoogleProvider
from authservice.social.providers.microsoft import MicrosoftProvider

BUILT_IN = {
    "apple": AppleProvider,
    "discord": DiscordProvider,
    "github": GitHubProvider,
    "gitlab": GitLabProvider,
    "google": GoogleProvider,
    "microsoft": MicrosoftProvider,
    "oidc": GenericOIDCProvider,
}


def provider_class(provider_id, entry):
    if entry.get("class"):
        return import_string(entry["class"])
    return BUILT_IN.get(entry.get("type") or provider_id)


def get_provider(provider_id):
    """The configured provider ``provider_id``, or ``None``."""
    entries = app_settings.social_providers or {}
    entry = entries.get(provider_id) if isinstance(provider_id, str) else None
    if not isinstance(entry, dict) or entry.get("enabled") is False:
        return None
    cls = provider_class(provider_id, entry)
    return cls(provider_id, entry) if cls is not None else None


def provider_ids():
    return [pid for pid in (app_settings.social_providers or {}) if get_provider(pid) is not None]
