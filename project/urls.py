from django.contrib import admin
from django.urls import include, path

from project import views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", views.demo, name="demo"),
    path("me/", views.me, name="me"),
    path("", include("sso.urls")),  # SCIM 2.0, ahead of authservice's catch-all
    path("", include("authservice.urls")),
]

handler400 = "authservice.views.bad_request"
handler403 = "authservice.views.permission_denied"
handler404 = "authservice.views.page_not_found"
handler500 = "authservice.views.server_error"
