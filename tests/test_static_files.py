"""The example project serves static files with DEBUG off (WhiteNoise), so the admin has its CSS.

``runserver`` serves them only with DEBUG on; WhiteNoise reads the apps' static directories (its finders)
in every mode, so the README's start command needs no ``collectstatic`` first.
"""

from django.test import Client


def test_the_admin_css_is_served_with_debug_off(settings):
    settings.DEBUG = False
    response = Client().get("/static/admin/css/base.css")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/css")


def test_an_unknown_static_file_is_404(settings, db):
    settings.DEBUG = False
    assert Client().get("/static/admin/css/no-such-file.css").status_code == 404
