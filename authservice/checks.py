"""System checks with stable ids (``authservice.E001`` ...)."""

from django.conf import settings
from django.core.checks import Error, Warning, register

from authservice import app_settings


@register()
def check_settings(app_configs, **kwargs):
    problems = [
        Error(f"Unknown setting AUTHSERVICE[{name!r}]", hint="See authservice/app_settings.py.",
              id="authservice.E001")
        for name in app_settings.unknown_keys()
    ]
    base_path = app_settings.base_path
    if not base_path.startswith("/") or base_path.endswith("/") and base_path != "/":
        problems.append(Error("AUTHSERVICE['base_path'] must start with '/' and not end with it",
                              id="authservice.E002"))
    if not app_settings.base_url:
        problems.append(Warning(
            "AUTHSERVICE['base_url'] is not set: mailed links use the request's Host header.",
            hint="Set it to the public origin, e.g. https://auth.example.com.", id="authservice.W001"))
    if not any("argon2" in hasher.lower() for hasher in settings.PASSWORD_HASHERS[:1]):
        problems.append(Warning("The first PASSWORD_HASHERS entry is not Argon2 [D6].",
                                id="authservice.W002"))
    if "authservice.hashers.BetterAuthScryptPasswordHasher" not in settings.PASSWORD_HASHERS:
        problems.append(Warning(
            "authservice.hashers.BetterAuthScryptPasswordHasher is not in PASSWORD_HASHERS: users "
            "imported from better-auth cannot sign in.", id="authservice.W003"))
    if not settings.DEBUG and _runs_tasks_inline():
        problems.append(Warning(
            "Mail tasks run inside the request (immediate task backend): how long an answer takes tells "
            "whether an account exists (I7).",
            hint="Use a queue that a worker empties, e.g. TASKS = {'default': {'BACKEND': "
                 "'django_tasks_db.DatabaseBackend'}} (example project: AUTH_TASKS_BACKEND=database) and run "
                 "python manage.py db_worker.", id="authservice.W004"))
    return problems


def _runs_tasks_inline():
    backend = getattr(settings, "TASKS", {}).get("default", {}).get("BACKEND", "")
    # Django's default when TASKS is unset is the immediate backend too.
    return not backend or backend.rpartition(".")[2] == "ImmediateBackend"
