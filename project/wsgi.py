import os

from django.core import checks
from django.core.management.base import SystemCheckError
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
application = get_wsgi_application()

# A WSGI server does not run Django's system checks; run them once here so a broken deployment (no
# xmlsec1 binary for SAML, an unknown setting) refuses to start with the checks' own message.
_errors = [message for message in checks.run_checks() if message.is_serious()]
if _errors:
    raise SystemCheckError("\n".join(str(message) for message in _errors))
