"""The demo page at ``/``, and ``/me/``: a project view that authservice's session signs in to."""

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from authservice import app_settings


@require_safe
def demo(request):
    return render(request, "demo.html", {"api": app_settings.base_path.rstrip("/")})


@require_safe
@login_required
def me(request):
    """Who ``request.user`` is (authservice.middleware.AuthSessionMiddleware set it)."""
    user = request.user
    return JsonResponse({"email": getattr(user, user.get_email_field_name())})
