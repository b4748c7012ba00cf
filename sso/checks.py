"""System checks with stable ids (``sso.E001`` ...).

Values are checked against the types declared next to the defaults (``app_settings.TYPES``);
``SETTING_CHECK_IDS`` gives each kind of problem its id. ``sso.E002`` and ``sso.E003`` keep the ids
they had before the types existed.
"""

from django.core.checks import Error, Tags, Warning, register
from django.db import DatabaseError, transaction

from authservice.setting_types import check_settings as check_values
from sso import app_settings, default_provider_checks, default_providers

SETTING_CHECK_IDS = {
    "type": "sso.E011",  # a value of the wrong type
    "range": "sso.E012",  # a duration, size or count out of range
    "choice": "sso.E013",  # not one of the allowed values
    "url": "sso.E014",  # not an absolute http(s) URL (or a path, where one is allowed)
    "import": "sso.E015",  # a dotted path that cannot be imported, or names no callable
    "nameserver": "sso.E016",  # a dns_nameservers entry that is no host[:port]
    "default_sso": "sso.E017",  # a default_sso item without provider_id
    "check_failed": "sso.E029",  # a value so odd that its check itself failed
}

# Checks of a key against other keys (in _combinations), listed per key in the settings reference.
COMBINATION_CHECK_IDS = {
    "trust_any_email_domain": ("sso.W001",),
    "domain_verification.enabled": ("sso.W001",),
    "saml.algorithms.on_deprecated": ("sso.W002",),
    "default_sso": ("sso.E018", "sso.E019"),  # E019: a database check (check_shadowed_rows)
}


@register()
def check_settings(app_configs, **kwargs):
    return check_setting_values()


def check_setting_values():
    """Problems of the project's AUTHSERVICE_SSO dict."""
    if not isinstance(app_settings.namespace.user_values(), dict):
        return check_values(app_settings.namespace, app_settings.TYPES, SETTING_CHECK_IDS)
    problems = [
        Error(f"Unknown setting AUTHSERVICE_SSO[{name!r}]", hint="See docs/reference/settings.md.",
              id="sso.E001")
        for name in app_settings.unknown_keys()
    ]
    problems += check_values(app_settings.namespace, app_settings.TYPES, SETTING_CHECK_IDS)
    if not any(problem.is_serious() for problem in problems):
        problems += _combinations()  # read through app_settings: only once every value has its type
    return problems


def _combinations():
    problems = [
        Error(f"AUTHSERVICE_SSO['default_sso'][{index}] ({provider_id!r}) is not a valid provider: {message}",
              hint="Fix the item as /sso/register would require (docs/sso-options.md).", id="sso.E018")
        for index, provider_id, message in default_provider_checks.problems()]
    if app_settings.trust_any_email_domain and not app_settings.domain_verification.enabled:
        problems.append(Warning(
            "AUTHSERVICE_SSO['trust_any_email_domain'] has no effect: without domain verification every "
            "provider may already sign in users of any e-mail domain.",
            hint="Turn domain_verification on (and keep this list short), or empty the list.", id="sso.W001"))
    if app_settings.saml.algorithms.on_deprecated == "allow":
        problems.append(Warning(
            "AUTHSERVICE_SSO['saml']['algorithms']['on_deprecated'] is 'allow': SHA-1 signatures, digests and "
            "RSA 1.5 key transport are accepted without a log line.",
            hint="Use 'warn' to see which IdPs still use them, then 'reject'.", id="sso.W002"))
    return problems


@register(Tags.database)
def check_shadowed_rows(app_configs, databases=None, **kwargs):
    """``sso.E019``: a row with a whole default_sso item's id; the settings provider is refused until it goes.

    Tagged ``database``: runs with ``check --database`` and ``migrate``, never at import or plain start-up.
    """
    problems = []
    for alias in databases or ():
        try:
            with transaction.atomic(using=alias):  # a savepoint: a failed query must not break an outer one
                rows = list(default_providers.shadowed_rows(using=alias).values_list("provider_id", "id"))
        except DatabaseError:  # the table does not exist yet (before migrate)
            continue
        problems += [Error(
            f"SSO provider row {row_pk} (database {alias!r}) has the provider_id {provider_id!r} of an "
            "AUTHSERVICE_SSO['default_sso'] provider: both are refused (409 PROVIDER_ID_CONFLICT) while it exists.",
            hint="Delete the row (Django admin or shell); the accounts linked through it are deleted with it. "
                 "It was registered before the id was named in settings, maybe by someone else (docs/sso-options.md).",
            obj=provider_id, id="sso.E019") for provider_id, row_pk in rows]
    return problems
