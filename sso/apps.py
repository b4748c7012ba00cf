import importlib

from django.apps import AppConfig


class SsoConfig(AppConfig):
    name = "sso"
    verbose_name = "Single sign-on"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from sso import checks  # noqa: F401 - registers the system checks
        from sso.saml import patches

        patches.install()  # pysaml2's speed-ups, listed with their reasons in sso/saml/patches.py
        from sso.endpoints import MODULES

        for module in MODULES:
            importlib.import_module(module)
        from authservice.api import openapi
        from sso.scim import openapi as scim_openapi
        from sso.scim import receivers as scim_receivers

        scim_receivers.connect()  # a deactivation by the site outranks the directory's (docs/scim.md)
        from sso import domain_membership

        domain_membership.connect()  # a social sign-in joins the organization of its verified e-mail domain
        from sso import row_deletion

        row_deletion.connect()  # a deleted provider row takes its accounts along, on every deletion path
        from sso import provider_claims

        provider_claims.connect()  # a social provider whose id a stored row holds fails closed

        if scim_openapi.extend not in openapi.extensions:  # SCIM's routes are not registry endpoints
            openapi.extensions.append(scim_openapi.extend)
