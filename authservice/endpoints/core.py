"""GET /ok and GET /error."""

import re

from django.conf import settings
from django.utils.html import escape

from authservice import app_settings, links
from authservice.api import inputs, render
from authservice.api.context import Redirect
from authservice.api.registry import endpoint

_ERROR_CODE = re.compile(r"^['A-Za-z0-9_-]+$")


@endpoint("GET", "/ok", name="ok", summary="Liveness check", response="Ok", tags=("core",))
def ok(ctx):
    return {"ok": True}


class ErrorQuery(inputs.Input):
    error = inputs.String(required=False)
    error_description = inputs.String(required=False)


@endpoint("GET", "/error", name="error", redirects=True, query=ErrorQuery, summary="Where OAuth errors land",
          response="Html", tags=("core",))
def error(ctx):
    code = ctx.query.get("error", "")
    code = code if _ERROR_CODE.match(code) else "UNKNOWN"
    description = ctx.query.get("error_description")
    params = {"error": code}
    if description:
        params["error_description"] = description
    if app_settings.error_url:
        return Redirect(links.with_params(app_settings.error_url, **params))
    if not settings.DEBUG:
        return Redirect(links.with_params("/", **params))
    detail = f"<p>{escape(description)}</p>" if description else ""
    return render.html(
        "<!doctype html><html><head><title>Sign-in error</title></head><body>"
        f"<h1>Sign-in error</h1><p><code>{escape(code)}</code></p>{detail}</body></html>"
    )
