"""System checks with stable ids (``authservice.E001`` ...).

Values are checked against the types declared next to the defaults (``app_settings.TYPES``, derived
from the default otherwise); ``SETTING_CHECK_IDS`` gives each kind of problem its id. The settings
reference (docs/reference/settings.md) lists them per key.
"""

from django.conf import settings
from django.core.checks import Error, Warning, register

from authservice import additional_field_checks, app_settings, cookies, origins
from authservice.setting_types import check_settings as check_values

SETTING_CHECK_IDS = {
    "type": "authservice.E003",  # a value of the wrong type (a string where a list belongs, ...)
    "range": "authservice.E004",  # a duration or count that must be positive (or >= 0)
    "choice": "authservice.E005",  # not one of the allowed values
    "url": "authservice.E006",  # not an absolute http(s) URL
    "origin": "authservice.E007",  # a trusted origin that matches nothing or cannot be parsed
    "import": "authservice.E008",  # a dotted path that cannot be imported, or names the wrong thing
    "cookie_name": "authservice.E009",  # a cookie name a browser would not keep as written
    "rate_rule": "authservice.E010",  # a rate_limit.custom_rules entry of the wrong shape
    "social_provider": "authservice.E011",  # a social provider entry the registry cannot build
    "additional_field": "authservice.E013",  # a user.additional_fields declaration of the wrong shape
    "base_path": "authservice.E002",
    "check_failed": "authservice.E019",  # a value so odd that its check itself failed
    "origin_path": "authservice.W006",  # a trusted origin with a path, which is ignored
    "origin_everything": "authservice.W007",  # a trusted-origin glob that keeps no fixed domain
}

# Checks of a key against other keys (in _combinations), listed per key in the settings reference.
COMBINATION_CHECK_IDS = {
    "email_and_password.min_password_length": ("authservice.E012",),
    "email_and_password.max_password_length": ("authservice.E012",),
    "base_url": ("authservice.W001", "authservice.W005"),
    "disable_origin_check": ("authservice.W008",),
    "secret": ("authservice.W009",),
    "rate_limit.custom_rules": ("authservice.W010",),
    "cookie_attributes.same_site": ("authservice.W011",),
    "user.additional_fields": ("authservice.E014",),
}

MIDDLEWARE_PATH = "authservice.middleware.AuthSessionMiddleware"
DJANGO_AUTH_MIDDLEWARE = "django.contrib.auth.middleware.AuthenticationMiddleware"


@register()
def check_settings(app_configs, **kwargs):
    problems = check_setting_values()
    if not any(problem.is_serious() for problem in problems):  # two_factor.enabled is readable
        problems += _password_only_backend()
    return problems + _hashers_and_tasks() + _middleware_order()


def check_setting_values():
    """Problems of the project's AUTHSERVICE dict alone."""
    if not isinstance(app_settings.namespace.user_values(), dict):
        return check_values(app_settings.namespace, app_settings.TYPES, SETTING_CHECK_IDS)
    problems = [
        Error(f"Unknown setting AUTHSERVICE[{name!r}]", hint="See docs/reference/settings.md.",
              id="authservice.E001")
        for name in app_settings.unknown_keys()
    ]
    problems += check_values(app_settings.namespace, app_settings.TYPES, SETTING_CHECK_IDS)
    if not any(problem.is_serious() for problem in problems):
        problems += _combinations()  # read through app_settings: only once every value has its type
        problems += additional_field_checks.check_model_fields()
    return problems


def _combinations():
    problems = []
    passwords = app_settings.email_and_password
    if passwords.min_password_length > passwords.max_password_length:
        problems.append(Error(
            "AUTHSERVICE['email_and_password']['min_password_length'] is greater than max_password_length: "
            "no password can be set.", hint="Lower the minimum or raise the maximum.", id="authservice.E012"))
    base_url = app_settings.base_url
    if not base_url:
        problems.append(Warning(
            "AUTHSERVICE['base_url'] is not set: mailed links use the request's Host header.",
            hint="Set it to the public origin, e.g. https://auth.example.com.", id="authservice.W001"))
    elif base_url.rstrip("/") != origins.origin_of(base_url):
        problems.append(Warning(
            f"AUTHSERVICE['base_url'] is more than an origin ({base_url!r}): links become "
            f"{base_url.rstrip('/')}{app_settings.base_path}/...", id="authservice.W005",
            hint=f"Give the origin only ({origins.origin_of(base_url)}) and the path as base_path."))
    if app_settings.disable_origin_check:
        problems.append(Warning(
            "AUTHSERVICE['disable_origin_check'] is on: any site can send signed-in requests (CSRF) and "
            "any callbackURL is followed (open redirect).", hint="Turn it off; list your apps in "
            "trusted_origins instead.", id="authservice.W008"))
    secret = app_settings.namespace.section().secret  # app_settings.secret() falls back to SECRET_KEY
    if secret is not None and len(secret) < 32:
        problems.append(Warning(
            "AUTHSERVICE['secret'] is shorter than 32 characters: cookies and tokens are signed with it.",
            hint="Use a long random value, e.g. python -c 'import secrets; print(secrets.token_urlsafe(48))', "
                 "or None for SECRET_KEY.", id="authservice.W009"))
    base_path = app_settings.base_path
    for pattern in app_settings.rate_limit.custom_rules:
        if base_path != "/" and (pattern == base_path or pattern.startswith(base_path + "/")):
            problems.append(Warning(
                f"AUTHSERVICE['rate_limit']['custom_rules'] key {pattern!r} starts with the base path: "
                "rules are matched against the path after it, so it never applies.",
                hint=f"Write {pattern[len(base_path):] or '/'!r}.", id="authservice.W010"))
    if app_settings.cookie_attributes.same_site == "none" and not cookies.is_secure():
        problems.append(Warning(
            "AUTHSERVICE['cookie_attributes']['same_site'] is 'none' but cookies are not Secure: browsers "
            "drop SameSite=None cookies without Secure, so no one stays signed in.",
            hint="Serve over https and set base_url to its https origin (or secure_cookies=True), or use "
                 "'lax'.", id="authservice.W011"))
    return problems


def _middleware_order():
    """Django's AuthenticationMiddleware sets request.user unconditionally: after ours, it replaces it."""
    middleware = list(getattr(settings, "MIDDLEWARE", None) or ())
    if MIDDLEWARE_PATH not in middleware or DJANGO_AUTH_MIDDLEWARE not in middleware:
        return []
    if middleware.index(MIDDLEWARE_PATH) > middleware.index(DJANGO_AUTH_MIDDLEWARE):
        return []
    return [Warning(
        f"{MIDDLEWARE_PATH} comes before {DJANGO_AUTH_MIDDLEWARE} in MIDDLEWARE: Django's middleware "
        "then replaces the request.user that authservice set.",
        hint=f"Move {MIDDLEWARE_PATH} after {DJANGO_AUTH_MIDDLEWARE}.", id="authservice.W012")]


DJANGO_MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _password_only_backend():
    """Django's ModelBackend signs in on a password alone, whatever second factor the user turned on."""
    if not app_settings.two_factor.enabled or DJANGO_MODEL_BACKEND not in settings.AUTHENTICATION_BACKENDS:
        return []
    return [Warning(
        f"{DJANGO_MODEL_BACKEND} is in AUTHENTICATION_BACKENDS while two-factor authentication is on: "
        "Django's login form (the admin's) signs users in on their password alone, skipping their second "
        "factor, and that Django session is request.user everywhere.",
        hint="Replace it with authservice.backends.ModelBackend.", id="authservice.W013")]


def _hashers_and_tasks():
    problems = []
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
