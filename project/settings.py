"""The example project: authservice (and sso) configured from the environment with django-environ.

Environment variables (a contract; tooling outside this repository relies on these names):
DATABASE_URL, SECRET_KEY, DEBUG, ALLOWED_HOSTS, AUTH_BASE_URL, AUTH_TRUSTED_ORIGINS, AUTH_RATE_LIMIT,
EMAIL_URL, REDIS_URL, AUTH_IP_HEADER, AUTH_SOCIAL_PROVIDERS, AUTH_TASKS_BACKEND, AUTH_BEARER, AUTH_COOKIE_SAME_SITE,
AUTH_TWO_FACTOR, DATABASE_PREPARE_THRESHOLD. See
docs/example-project.md for each.
"""

import warnings
from importlib.util import find_spec
from pathlib import Path

import environ
from corsheaders.defaults import default_headers
from django.core.exceptions import ImproperlyConfigured

from project.cors import allowed_origins
from project.mailers import mail_settings

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env") if (BASE_DIR / ".env").exists() else None

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="dev-insecure-secret-change-me-" + "x" * 32)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])

AUTH_BASE_URL = env.str("AUTH_BASE_URL", default="http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    # Django's task framework (the backport until Django 6) and its database queue: mail leaves the
    # request path through it (I7).
    "django_tasks",
    "django_tasks_db",
    "authservice",
    "sso",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files with DEBUG off (the admin's CSS); CORS answers preflights before anything else can.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After Django's: request.user is whoever authservice's session cookie names (lazily; our own
    # endpoints never read it, so they pay nothing), else Django's own session user.
    "authservice.middleware.AuthSessionMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "project.urls"
WSGI_APPLICATION = "project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
# Reuse connections between requests. No per-request health check (it costs a round trip on every
# request, a third of get-session's time): when the database restarts, the request that finds the
# connection dead answers a clean 503 and Django drops that connection, so the next one reconnects.
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("CONN_HEALTH_CHECKS", default=False)
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # Server-side prepared statements for authservice's hot SQL (authservice/db.py): psycopg prepares a
    # statement after it ran this many times on a connection, and PostgreSQL then skips parsing and
    # planning it (get-session's lookup, bench/README.md). Django leaves them off because PgBouncer in
    # transaction mode (before 1.21) cannot route them: set DATABASE_PREPARE_THRESHOLD= (empty) there.
    _prepare = env.str("DATABASE_PREPARE_THRESHOLD", default="5")
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", int(_prepare) if _prepare else None)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Several server processes share one file: wait for locks instead of failing at once, and take
    # the write lock when a transaction begins, so two writers queue instead of deadlocking on upgrade.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("timeout", 20)
    DATABASES["default"]["OPTIONS"].setdefault("transaction_mode", "IMMEDIATE")

REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_USER_MODEL = "authservice.User"
# Django's login form (the admin's) must not sign in on a password alone a user who has a second factor
# (docs/mfa.md, authservice.W013): this ModelBackend refuses them, authservice's sign-in asks for it.
AUTHENTICATION_BACKENDS = ["authservice.backends.ModelBackend"]
# Every sign-in runs each listed hasher that some stored hash uses, so that an imported user costs what
# an unknown address costs (I7, authservice/hashers.py); a listed hasher no hash uses costs nothing.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "authservice.hashers.BetterAuthScryptPasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]

EMAIL_CONFIG = env.email_url("EMAIL_URL", default="consolemail://")
# MAILERS on Django 6.1+ (its EMAIL_* connection settings are deprecated), EMAIL_* on 5.2.
vars().update(mail_settings(EMAIL_CONFIG))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="auth@localhost")

# Mail is sent by tasks (authservice/tasks.py). "database": each is a row that survives a restart, sent
# by `python manage.py db_worker`; the request path only inserts that row, the same for a known and an
# unknown address (I7). "immediate" (the development default, and the tests'): the task runs inside the
# request, so the mail is sent before the answer and its time shows; production uses "database".
# Django 6 ships the task framework (django.tasks), and django_tasks_db builds on it there; Django 5.2 has
# the django-tasks backport. @task() makes the Task class of the default backend's framework, so the
# immediate backend must come from the same framework as the database one.
_TASKS_FRAMEWORK = "django.tasks" if find_spec("django.tasks") else "django_tasks"
_TASK_BACKENDS = {
    "immediate": f"{_TASKS_FRAMEWORK}.backends.immediate.ImmediateBackend",
    "database": "django_tasks_db.DatabaseBackend",
}
_tasks_backend = env.str("AUTH_TASKS_BACKEND", default="immediate")
if _tasks_backend not in _TASK_BACKENDS:
    raise ImproperlyConfigured(f"AUTH_TASKS_BACKEND must be one of {', '.join(_TASK_BACKENDS)}")
TASKS = {"default": {"BACKEND": _TASK_BACKENDS[_tasks_backend]}}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

_trusted = env.list("AUTH_TRUSTED_ORIGINS", default=[])
AUTHSERVICE = {
    "base_url": AUTH_BASE_URL,
    "trusted_origins": _trusted,
    "rate_limit": {
        "enabled": env.bool("AUTH_RATE_LIMIT", default=True),
        # With Redis every process shares the cache; without it, counters live in the database.
        "storage": "cache" if REDIS_URL else "database",
    },
    "ip_address_header": env.str("AUTH_IP_HEADER", default="") or None,
    "social_providers": env.json("AUTH_SOCIAL_PROVIDERS", default={}),
    # better-auth's bearer plugin: Authorization: Bearer <token> and the set-auth-token header.
    "bearer": {"enabled": env.bool("AUTH_BEARER", default=False)},
    # "none" for an SPA on another site (over https only); see docs/clients.md.
    "cookie_attributes": {"same_site": env.str("AUTH_COOKIE_SAME_SITE", default="lax")},
    "two_factor": {"enabled": env.bool("AUTH_TWO_FACTOR", default=True)},
    # better-auth's session.cookieCache: get-session answers from a signed cookie for max_age seconds,
    # so a session revoked on another device stays visible there until then (docs/sessions.md).
    "session": {"cookie_cache": {
        "enabled": env.bool("AUTH_SESSION_COOKIE_CACHE", default=False),
        "max_age": env.int("AUTH_SESSION_COOKIE_CACHE_MAX_AGE", default=300),
    }},
    # better-auth's passkey plugin; the RP ID defaults to AUTH_BASE_URL's hostname (no IP address in a
    # browser: use http://localhost:8000 to try passkeys locally).
    "passkey": {"enabled": env.bool("AUTH_PASSKEY", default=True),
                "rp_id": env.str("AUTH_PASSKEY_RP_ID", default="") or None},
}

# The SSO plugin (sso.md, "Settings of the example project").
AUTHSERVICE_SSO = {
    "domain_verification": {"enabled": env.bool("AUTH_SSO_DOMAIN_VERIFICATION", default=True)},
    "dns_nameservers": env.list("AUTH_SSO_DNS_NAMESERVERS", default=[]),
    "providers_limit": 10,
    "organization": {"enabled": True},
    "organization_provisioning": {"default_role": "member"},
    "saml": {
        "allow_idp_initiated": env.bool("AUTH_SSO_SAML_ALLOW_IDP_INITIATED", default=False),
        # SAML Single Logout (docs/saml-slo.md): the SLO endpoints and SingleLogoutService in SP metadata.
        "enable_single_logout": env.bool("AUTH_SSO_SAML_ENABLE_SINGLE_LOGOUT", default=False),
    },
    # SCIM 2.0 provisioning under {base}/scim/v2/ (docs/scim.md); each connection needs its own token.
    "scim": {"enabled": env.bool("AUTH_SCIM_ENABLED", default=True)},
}

# --- Static files: WhiteNoise ------------------------------------------------------------------------
# `runserver` serves static files only with DEBUG on; WhiteNoise serves them in every mode, so the admin
# has its CSS with DEBUG=false too. With the finders it reads the apps' static directories directly: no
# `collectstatic` step before the first start. `collectstatic` (into STATIC_ROOT) remains for a
# deployment that puts the files behind a CDN or another server.
WHITENOISE_USE_FINDERS = True
# Until `collectstatic` has run, STATIC_ROOT does not exist, which is expected here: the finders serve.
warnings.filterwarnings("ignore", message=r"No directory at: .*static")

# --- CORS: SPAs on other origins (django-cors-headers) ---------------------------------------------
# A page on a trusted origin may call the API with credentials and read the answers: the preflight
# names exactly the origins authservice trusts (globs become anchored regexes, project/cors.py). The
# Origin check still refuses every cookie-carrying write from any other origin.
CORS_ALLOWED_ORIGINS, CORS_ALLOWED_ORIGIN_REGEXES = allowed_origins([AUTH_BASE_URL, *_trusted])
CORS_ALLOW_CREDENTIALS = True
CORS_URLS_REGEX = r"^/api/"  # the JSON API only: not the admin, not the demo page
# Includes content-type (JSON bodies) and authorization (bearer tokens), what better-auth's client sends.
CORS_ALLOW_HEADERS = (*default_headers,)
CORS_EXPOSE_HEADERS = ["set-auth-token"]  # the bearer plugin's token on sign-in

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        # Tracebacks of 500s reach the console even with DEBUG off.
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "authservice": {"handlers": ["console"], "level": "WARNING", "propagate": False},
        # Why a request got 403 INVALID_ORIGIN: the refused Origin and the trusted list.
        "authservice.origins": {"level": "INFO"},
    },
}
