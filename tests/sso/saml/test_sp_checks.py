"""System check sso.E010: without the xmlsec1 binary pysaml2 builds no SAML client."""

import os
import subprocess
import sys
from pathlib import Path

from django.core.checks import run_checks

ROOT = Path(__file__).resolve().parents[3]


def test_no_error_when_xmlsec1_is_installed():
    assert not [e for e in run_checks() if e.id == "sso.E010"]


def test_a_missing_xmlsec1_binary_is_a_clear_startup_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    [error] = [e for e in run_checks() if e.id == "sso.E010"]
    assert "xmlsec1" in error.msg and "apt-get install xmlsec1" in error.hint


def test_the_wsgi_application_refuses_to_start_without_xmlsec1(tmp_path):
    # A WSGI server runs no system checks itself: project/wsgi.py runs them at import.
    env = {**os.environ, "PATH": str(tmp_path), "DJANGO_SETTINGS_MODULE": "project.settings"}
    started = subprocess.run([sys.executable, "-c", "import project.wsgi"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
    assert started.returncode != 0
    assert "sso.E010" in started.stderr


def test_the_wsgi_application_starts_with_xmlsec1():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "project.settings"}
    started = subprocess.run([sys.executable, "-c", "import project.wsgi"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
