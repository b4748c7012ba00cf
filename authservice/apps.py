import importlib

from django.apps import AppConfig


class AuthServiceConfig(AppConfig):
    name = "authservice"
    verbose_name = "Authentication"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from authservice import checks  # noqa: F401 - registers the system checks
        from authservice import password_changes, user_checks  # noqa: F401 - user_checks: those of the user model
        from authservice.endpoints import MODULES

        for module in MODULES:
            importlib.import_module(module)
        password_changes.connect()
