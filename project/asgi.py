"""ASGI entry point of the example project, for ASGI servers (granian --interface asgi, uvicorn).

authservice's views are synchronous: under ASGI Django runs each of them in a worker thread. The
benchmark (bench/servers.sh) compares this with the WSGI servers; see the README ("Production server").
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

application = get_asgi_application()
