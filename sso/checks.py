"""System checks with stable ids (``sso.E001`` ...).

Values are checked against the types declared next to the defaults (``app_settings.TYPES``);
``SETTING_CHECK_IDS`` gives each kind of problem its id. ``sso.E002`` and ``sso.E003`` keep the ids
they had before the types existed.
"""

from django.core.checks import Error, Tags, Warning, register
from django.db import DatabaseError, transaction

from authservice import users
from authservice.setting_types import check_settings as check_values
from sso import app_settings, default_provider_checks, default_providers, provider_claims
from sso.models import SsoProvider

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
    "trust_any_email_domain": ("sso.W001", "sso.W003"),  # W003: a database check (check_trusted_rows)
    "domain_verification.enabled": ("sso.W001",),
    "saml.algorithms.on_deprecated": ("sso.W002",),
    # E019: a database check (check_shadowed_rows), for every claimed id (sso/provider_claims.py).
    "default_sso": ("sso.E018", "sso.E019"),
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


def _rows(databases, query):
    """``[(alias, row)]`` over the databases; one without the table yet (before migrate) is skipped."""
    found = []
    for alias in databases or ():
        try:
            with transaction.atomic(using=alias):  # a savepoint: a failed query must not break an outer one
                found += [(alias, row) for row in query(alias)]
        except DatabaseError:
            continue
    return found


@register(Tags.database)
def check_shadowed_rows(app_configs, databases=None, **kwargs):
    """``sso.E019``: a row whose provider_id the deployment claims (sso/provider_claims.py); the row, and a
    settings provider of its id, answer 409 PROVIDER_ID_CONFLICT until it is deleted.

    Tagged ``database``: runs with ``check --database`` and ``migrate``, never at import or plain start-up.
    """
    claims = provider_claims.claims()
    found = _rows(databases,
                  lambda alias: default_providers.shadowed_rows(using=alias).values_list("provider_id", "id"))
    return [_conflict(alias, provider_id, row_pk, claims[provider_id]) for alias, (provider_id, row_pk) in found]


def _conflict(alias, provider_id, row_pk, claim):
    both = ", and so is the settings provider" if claim == provider_claims.SETTINGS_PROVIDER else ""
    return Error(
        f"SSO provider row {row_pk} (database {alias!r}) has the provider_id {provider_id!r}, claimed by {claim}: "
        f"it is refused (409 PROVIDER_ID_CONFLICT) while it exists{both}.",
        hint=f"{provider_claims.resolution(claim)} It was registered before the id was claimed, maybe by "
             "someone else (docs/sso-options.md).", obj=provider_id, id="sso.E019")


@register(Tags.database)
def check_trusted_rows(app_configs, databases=None, **kwargs):
    """``sso.W003``: a row listed in trust_any_email_domain, which vouches for every e-mail domain.

    Not a conflict (the setting configures the row), but whoever registered the id first owns that
    trust: the operator should confirm the owner.
    """
    listed = list(app_settings.trust_any_email_domain or ())
    if not listed:
        return []
    found = _rows(databases, lambda alias: SsoProvider.objects.using(alias).filter(provider_id__in=listed)
                  .select_related("user").order_by("provider_id"))
    return [Warning(
        f"SSO provider row {row.provider_id!r} (database {alias!r}, owner {users.email_of(row.user)}) is "
        "listed in AUTHSERVICE_SSO['trust_any_email_domain']: it is trusted for every e-mail domain, "
        "whoever registered it.",
        hint="Keep it listed only if its owner and IdP are yours; otherwise remove it from the list "
             "(docs/sso-options.md).", obj=row.provider_id, id="sso.W003") for alias, row in found]
