"""``EMAIL_URL`` (django-environ's ``email_url``) as the example project's mail settings.

Django 6.1 replaced ``EMAIL_BACKEND``, ``EMAIL_HOST`` and the other ``EMAIL_*`` connection settings with
``MAILERS`` (deprecated: setting them warns, and with ``MAILERS`` defined they are refused). Before 6.1
there is no ``MAILERS``, so the project keeps django-environ's ``EMAIL_*`` settings there unchanged.
``DEFAULT_FROM_EMAIL`` is no connection setting and stays as it is on both.
"""

import django

SMTP = "django.core.mail.backends.smtp.EmailBackend"
FILEBASED = "django.core.mail.backends.filebased.EmailBackend"

# django-environ's setting name -> the backend's OPTIONS name (Django's "Migrating email to mailers").
OPTION_NAMES = {
    SMTP: {
        "EMAIL_HOST": "host",
        "EMAIL_PORT": "port",
        "EMAIL_HOST_USER": "username",
        "EMAIL_HOST_PASSWORD": "password",
        "EMAIL_USE_TLS": "use_tls",
        "EMAIL_USE_SSL": "use_ssl",
        "EMAIL_TIMEOUT": "timeout",
        "EMAIL_SSL_CERTFILE": "ssl_certfile",
        "EMAIL_SSL_KEYFILE": "ssl_keyfile",
    },
    FILEBASED: {"EMAIL_FILE_PATH": "file_path"},
}


def uses_mailers():
    return django.VERSION >= (6, 1)


def mailer(config):
    """One ``MAILERS`` entry for a django-environ ``email_url`` config.

    Only the options the backend takes: a backend refuses unknown OPTIONS, and django-environ fills
    every key (``EMAIL_FILE_PATH=""`` for SMTP, ``EMAIL_HOST=None`` for the console).
    """
    backend = config["EMAIL_BACKEND"]
    names = OPTION_NAMES.get(backend, {})
    options = {names[key]: value for key, value in config.items() if key in names and value not in (None, "")}
    return {"BACKEND": backend, "OPTIONS": options}


def mail_settings(config):
    """The settings for ``config``: ``MAILERS`` on Django 6.1 and later, django-environ's ``EMAIL_*`` before."""
    if uses_mailers():
        return {"MAILERS": {"default": mailer(config)}}
    return dict(config)
