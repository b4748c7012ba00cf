"""Routes of the SSO app that are not better-auth endpoints: SCIM 2.0 (sso/scim/views.py says why).

Mount before ``authservice.urls``, whose catch-all takes every path under the base path::

    path("", include("sso.urls")),
    path("", include("authservice.urls")),
"""

import re

from django.urls import re_path

from authservice import app_settings
from sso.scim.views import scim_view

app_name = "sso"

_base = re.escape(app_settings.base_path.strip("/"))
urlpatterns = [
    # [\s\S] and \Z: a path with an encoded newline is still SCIM's to answer (in the SCIM Error schema).
    re_path(rf"^{_base}/scim/v2/(?P<subpath>[\s\S]*)\Z", scim_view, name="scim"),
]
