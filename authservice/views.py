"""Django's own error views, answering JSON under the base path.

Errors Django raises before our view runs (a bad Host header, a request Django refuses) still reach an
SPA as ``{message, code, status}``. Set them in the project's root URLconf::

    handler400 = "authservice.views.bad_request"
    handler403 = "authservice.views.permission_denied"
    handler404 = "authservice.views.page_not_found"
    handler500 = "authservice.views.server_error"

Django's own HTML pages elsewhere get the same ``nosniff`` and sandboxing CSP as our non-JSON answers (I3).
"""

from django.views import defaults

from authservice import app_settings
from authservice.api import render
from authservice.errors import APIError, codes


def _is_api(request):
    base = app_settings.base_path.rstrip("/")
    return request.path == base or request.path.startswith(base + "/")


def bad_request(request, exception=None):
    if _is_api(request):
        return render.error(APIError(400, codes.BAD_REQUEST, "Bad Request"))
    return render.harden(defaults.bad_request(request, exception))


def permission_denied(request, exception=None):
    if _is_api(request):
        return render.error(APIError(403, codes.FORBIDDEN))
    return render.harden(defaults.permission_denied(request, exception))


def page_not_found(request, exception=None):
    if _is_api(request):
        return render.not_found_response()
    return render.harden(defaults.page_not_found(request, exception))


def server_error(request):
    if _is_api(request):
        return render.error(APIError(500, codes.INTERNAL_SERVER_ERROR))
    return render.harden(defaults.server_error(request))
