"""The demo page at ``/``: the JSON API driven from a browser with a few lines of JavaScript."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from authservice import app_settings


@require_safe
def demo(request):
    return render(request, "demo.html", {"api": app_settings.base_path.rstrip("/")})
