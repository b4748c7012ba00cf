"""Run some tests again under another settings module (another AUTH_USER_MODEL), in a subprocess.

A process has one user model, so the mapping under ``auth.User`` and the e-mail model is checked by
running pytest again. On PostgreSQL the child gets a database of its own (``<name>_<settings>``):
pytest-django would otherwise create the parent's test database a second time while the parent holds it.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _database_url_for(settings_module):
    url = os.environ.get("DATABASE_URL")
    if not url or url.startswith("sqlite"):
        return url
    base, _, name = url.rpartition("/")
    return f"{base}/{name}_{settings_module.rpartition('.')[2]}"


def run_pytest(settings_module, *args):
    """``python -m pytest -q <args>`` under ``settings_module``; the CompletedProcess."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": settings_module}
    url = _database_url_for(settings_module)
    if url:
        env["DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--ds={settings_module}", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
