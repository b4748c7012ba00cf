"""Mount with ``path("", include("authservice.urls"))``: every endpoint under the base path.

One catch-all route hands the request to the router, which matches the registry's declarations;
that keeps rate limiting ahead of routing (core.md §1.1) and makes unknown paths JSON 404s.
"""

import re

from django.urls import re_path

from authservice import app_settings
from authservice.api.dispatch import http_view

app_name = "authservice"

_base = re.escape(app_settings.base_path.strip("/"))
urlpatterns = [
    re_path(rf"^{_base}(?P<subpath>/.*)?$", http_view, name="api"),
]
