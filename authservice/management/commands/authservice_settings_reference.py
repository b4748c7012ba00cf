"""Print the settings reference page (Markdown) generated from the code.

    python manage.py authservice_settings_reference > docs/reference/settings.md
"""

import sys

from django.apps import apps as installed
from django.conf import settings
from django.core.management.base import BaseCommand

from authservice import app_settings, checks, settings_reference


def documented_apps():
    """authservice, and the SSO plugin when it is installed."""
    found = [(app_settings, checks)]
    if installed.is_installed("sso"):
        from sso import app_settings as sso_settings  # noqa: PLC0415 - only when installed
        from sso import checks as sso_checks  # noqa: PLC0415

        found.append((sso_settings, sso_checks))
    return found


class Command(BaseCommand):
    help = "Print docs/reference/settings.md: every AUTHSERVICE/AUTHSERVICE_SSO key, default, type, checks."
    requires_system_checks = []  # documents the settings; must work while they are being fixed

    def add_arguments(self, parser):
        parser.add_argument("--settings-source", help="Settings module file to read environment variable "
                                                      "names from (default: the current settings module's).")

    def handle(self, *args, settings_source=None, **options):
        source = settings_source or getattr(sys.modules.get(settings.SETTINGS_MODULE), "__file__", None)
        self.stdout.write(settings_reference.render(documented_apps(), source), ending="")
