"""A real gunicorn server (2 workers) on a loopback port, for tests that must cross a real HTTP stack.

Its database: on PostgreSQL (``DATABASE_URL`` set to postgres) a separate database ``<suite database>_fuzz`` on
the same server, recreated and migrated; otherwise a SQLite file in a temporary directory, migrated.
The rate limiter is off (``AUTH_RATE_LIMIT=false``) so fuzzing measures behaviour, not limits.
"""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
BASE_PATH = "/api/auth"
# Named after the suite's own database, so two runs on different DATABASE_URLs never collide.
FUZZ_DATABASE = (urlsplit(os.environ.get("DATABASE_URL", "")).path.lstrip("/") or "authservice") + "_fuzz"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _recreate_postgres_database(url):
    import psycopg

    parts = urlsplit(url)
    admin = urlunsplit(parts._replace(scheme="postgresql", path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{FUZZ_DATABASE}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{FUZZ_DATABASE}"')
    return urlunsplit(parts._replace(path=f"/{FUZZ_DATABASE}"))


def database_url(workdir):
    configured = os.environ.get("DATABASE_URL", "")
    if configured.startswith(("postgres://", "postgresql://", "pgsql://")):
        return _recreate_postgres_database(configured)
    return f"sqlite:///{Path(workdir) / 'fuzz.sqlite3'}"


class LiveServer:
    def __init__(self, workdir, workers=2):
        self.workdir = Path(workdir)
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.base = self.origin + BASE_PATH
        self.log_path = self.workdir / "gunicorn.log"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "project.settings",
            "DATABASE_URL": database_url(self.workdir),
            "AUTH_BASE_URL": self.origin,
            "AUTH_RATE_LIMIT": "false",
            "DEBUG": "false",
            "EMAIL_URL": "dummymail://",
            "PYTHONUNBUFFERED": "1",
        }
        self.workers = workers
        self.process = None

    def migrate(self):
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT,
                       env=self.env, check=True, timeout=180)

    def start(self, timeout=30):
        self.migrate()
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child for its lifetime
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "project.wsgi:application", "--workers", str(self.workers),
             "--bind", f"127.0.0.1:{self.port}", "--timeout", "60", "--graceful-timeout", "5"],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.base + "/ok", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"gunicorn did not answer within {timeout}s:\n{self.log_tail()}")

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def log_tail(self, size=6000):
        try:
            return self.log_path.read_text(errors="replace")[-size:]
        except FileNotFoundError:
            return ""

    def server_errors(self):
        """Tracebacks Django logged for 500s so far (the console handler of ``django.request``)."""
        text = self.log_tail(size=10**7)
        return [chunk for chunk in text.split("Internal Server Error: ")[1:]]
