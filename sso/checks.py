"""System checks with stable ids (``sso.E001`` ...)."""

from django.core.checks import Error, register

from sso import app_settings


@register()
def check_settings(app_configs, **kwargs):
    problems = [
        Error(f"Unknown setting AUTHSERVICE_SSO[{name!r}]", hint="See sso/app_settings.py.", id="sso.E001")
        for name in app_settings.unknown_keys()
    ]
    role = app_settings.organization_provisioning.default_role
    if role not in ("member", "admin"):
        problems.append(Error("AUTHSERVICE_SSO['organization_provisioning']['default_role'] must be "
                              "'member' or 'admin'", id="sso.E002"))
    if app_settings.saml.algorithms.on_deprecated not in ("warn", "reject", "allow"):
        problems.append(Error("AUTHSERVICE_SSO['saml']['algorithms']['on_deprecated'] must be 'warn', "
                              "'reject' or 'allow'", id="sso.E003"))
    return problems
