"""An existing Django site adopts authservice from the built wheel, as the docs say (issue 13, "Done when").

A fresh virtualenv gets the wheel (not this checkout); ``django-admin startproject`` makes a site that keeps
``auth.User``, is migrated and has a user with a PBKDF2 password hash, as any existing project has. Then the
adoption steps: ``INSTALLED_APPS``, the middleware, ``PASSWORD_HASHERS`` (argon2 first, PBKDF2 kept),
``AUTHSERVICE``, ``include("authservice.urls")``, and ``migrate`` again. The site runs under ``runserver`` on a loopback port; the user signs in through the
better-auth wire with the old password, and a ``@login_required`` view of the site sees them.

Slow (a virtualenv and a pip install), so it runs only when ``AUTHSERVICE_ADOPTION_TEST=1``: CI's wheel
stage runs it on the wheel it built (``AUTHSERVICE_DIST``, see conftest.py).
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.adoption.conftest import ADOPTION, ROOT
from tests.peers.gunicorn import free_port

pytestmark = ADOPTION

EMAIL = "ada@example.com"
OLD_PASSWORD = "the password she always had"

ADOPT_SETTINGS = """
# --- adopting django-authservice ---
INSTALLED_APPS += ["rest_framework", "authservice"]
MIDDLEWARE += ["authservice.middleware.AuthSessionMiddleware"]
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "authservice.hashers.BetterAuthScryptPasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",  # the hashes the site already has
]
AUTHSERVICE = {{"base_url": "{origin}"}}
"""

ADOPT_URLS = """
# --- adopting django-authservice ---
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.urls import include, path


@login_required
def whoami(request):
    return HttpResponse(request.user.email)


urlpatterns += [path("", include("authservice.urls")), path("whoami/", whoami)]
"""


class Site:
    """A startproject site in its own virtualenv; every command runs there, never in this checkout."""

    def __init__(self, root):
        self.root = root
        self.venv = root / "venv"
        self.project = root / "mysite"
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        # Nothing of this checkout or of the suite's Django leaks in.
        self.env = {key: value for key, value in os.environ.items()
                    if key not in {"DJANGO_SETTINGS_MODULE", "PYTHONPATH", "DATABASE_URL", "VIRTUAL_ENV"}}
        self.env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{os.environ['PATH']}"

    def run(self, *command, timeout=300):
        done = subprocess.run(command, cwd=self.project if self.project.exists() else self.root, env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{' '.join(map(str, command))}:\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    def manage(self, *args):
        return self.run(str(self.venv / "bin" / "python"), "manage.py", *args)

    def append(self, relative, text):
        with open(self.project / "mysite" / relative, "a") as file:
            file.write(text)


def pins(directory):
    """requirements.txt as pip constraints (no extras allowed there): the versions CI tests with."""
    text = re.sub(r"\[[^\]]*\]==", "==", (ROOT / "requirements.txt").read_text())
    path = Path(directory) / "constraints.txt"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def installed(tmp_path_factory, wheel):
    """A fresh virtualenv holding the wheel and its dependencies, nothing else."""
    root = tmp_path_factory.mktemp("adoption")
    site = Site(root)
    site.run(sys.executable, "-m", "venv", str(site.venv))
    site.run(str(site.venv / "bin" / "pip"), "install", "-q", "-c", str(pins(root)), str(wheel))
    return site


@pytest.fixture(scope="module")
def existing(installed):
    """An existing project: startproject's settings (auth.User, PBKDF2), migrated, with a user."""
    site = installed
    site.run(str(site.venv / "bin" / "django-admin"), "startproject", "mysite")
    site.manage("migrate", "--noinput")
    site.manage("shell", "-v", "0", "-c", "from django.contrib.auth.models import User; "
                f"User.objects.create_user('ada', {EMAIL!r}, {OLD_PASSWORD!r})")
    return site


@pytest.fixture(scope="module")
def site(existing):
    """The existing project after the adoption steps, checked and migrated again."""
    existing.append("settings.py", ADOPT_SETTINGS.format(origin=existing.origin))
    existing.append("urls.py", ADOPT_URLS)
    existing.check_output = existing.manage("check")
    existing.migrate_output = existing.manage("migrate", "--noinput")
    return existing


@pytest.fixture(scope="module")
def server(site):
    log = open(site.root / "runserver.log", "w")
    process = subprocess.Popen([str(site.venv / "bin" / "python"), "manage.py", "runserver", "--noreload",
                                f"127.0.0.1:{site.port}"],
                               cwd=site.project, env=site.env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_answering(process, f"{site.origin}/api/auth/ok", site.root / "runserver.log")
        yield site
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()


def wait_until_answering(process, url, log_path, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"runserver exited:\n{log_path.read_text()[-4000:]}")
        try:
            requests.get(url, timeout=5)
            return
        except requests.ConnectionError:
            time.sleep(0.1)
    raise RuntimeError(f"runserver did not answer within {timeout}s:\n{log_path.read_text()[-4000:]}")


def sign_in(site, password):
    return requests.post(f"{site.origin}/api/auth/sign-in/email", json={"email": EMAIL, "password": password},
                         headers={"Origin": site.origin}, timeout=30)


def test_authservice_is_imported_from_the_wheel_not_this_checkout(installed):
    location = installed.run(str(installed.venv / "bin" / "python"), "-c",
                             "import authservice; print(authservice.__file__)")
    assert str(installed.venv) in location and str(ROOT) not in location


def test_the_existing_user_has_a_pbkdf2_hash(existing):
    algorithm = existing.manage("shell", "-v", "0", "-c", "from django.contrib.auth.models import User; "
                                f"print(User.objects.get(email={EMAIL!r}).password.split('$')[0])")
    assert algorithm.strip() == "pbkdf2_sha256"


def test_check_passes_on_the_adopted_site(site):
    assert "System check identified no issues" in site.check_output


def test_migrate_after_adoption_adds_authservice_to_the_migrated_site(site):
    assert "Applying authservice.0001_initial... OK" in site.migrate_output


def test_an_existing_user_signs_in_with_the_old_password(server):
    response = sign_in(server, OLD_PASSWORD)
    assert response.status_code == 200, response.text
    assert response.json()["user"]["email"] == EMAIL
    assert "auth.session_token" in response.cookies


def test_a_login_required_view_sees_the_signed_in_user(server):
    cookies = sign_in(server, OLD_PASSWORD).cookies
    response = requests.get(f"{server.origin}/whoami/", cookies=cookies, allow_redirects=False, timeout=30)
    assert response.status_code == 200, response.text
    assert response.text == EMAIL


def test_the_view_still_sends_anonymous_visitors_to_the_login_page(server):
    response = requests.get(f"{server.origin}/whoami/", allow_redirects=False, timeout=30)
    assert response.status_code == 302
