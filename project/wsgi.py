import os

from django.core import checks
from django.core.management.base import SystemCheckError
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

from authservice import wsgi  # noqa: E402  (after the settings module is named)

# API requests (/api/auth/...) skip the middleware they never use (sessions, CSRF, messages, static
# files): a fifth of get-session's CPU. The admin and the project's views keep the full stack.
application = wsgi.application(get_wsgi_application())

# A WSGI server does not run Django's system checks; run them once here so a broken deployment (no
# xmlsec1 binary for SAML, an unknown setting) refuses to start with the checks' own message.
_errors = [message for message in checks.run_checks() if message.is_serious()]
if _errors:
    raise SystemCheckError("\n".join(str(message) for message in _errors))
