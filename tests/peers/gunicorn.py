"""The example project under a real gunicorn on a loopback port, and the database it runs on.

For the tests that must cross a real HTTP stack and real processes: the fuzzing run (tests/fuzz_server.py)
and the two-process tests (tests/multiprocess/). On PostgreSQL (``DATABASE_URL`` set to postgres) a
server gets a database of its own on the same server, named after the suite's database plus a suffix, so
two runs on different ``DATABASE_URL``s never drop each other's; otherwise the caller passes a SQLite file.
"""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests

ROOT = Path(__file__).resolve().parents[2]
BASE_PATH = "/api/auth"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_url():
    """The test run's PostgreSQL URL, or ``None`` on SQLite."""
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://", "pgsql://")) else None


def suite_database(suffix):
    """``<the suite's database name>_<suffix>``."""
    return (urlsplit(os.environ.get("DATABASE_URL", "")).path.lstrip("/") or "authservice") + f"_{suffix}"


def _libpq(url, database):
    return urlunsplit(urlsplit(url)._replace(scheme="postgresql", path=f"/{database}"))


def admin_connection(database="postgres"):
    import psycopg

    return psycopg.connect(_libpq(postgres_url(), database), autocommit=True)


def recreate_postgres_database(name):
    """An empty PostgreSQL database ``name`` on the run's server; its URL (migrated by the caller)."""
    with admin_connection() as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(postgres_url())._replace(path=f"/{name}"))


def drop_postgres_database(name):
    with admin_connection() as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def migrate(env, timeout=180):
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env,
                   check=True, timeout=timeout)


class GunicornServer:
    """``gunicorn project.wsgi:application`` with ``env`` on 127.0.0.1:``port``, logging to ``log_path``."""

    def __init__(self, name, env, log_path, port=None, workers=1, worker_timeout=30, graceful_timeout=3):
        self.name = name
        self.port = port or free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.base = self.origin + BASE_PATH
        self.env = env
        self.log_path = Path(log_path)
        self.workers, self.worker_timeout, self.graceful_timeout = workers, worker_timeout, graceful_timeout
        self.process = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "project.wsgi:application", "--workers", str(self.workers),
                 "--bind", f"127.0.0.1:{self.port}", "--timeout", str(self.worker_timeout),
                 "--graceful-timeout", str(self.graceful_timeout)],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            )
        return self

    def wait_ready(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn {self.name} exited:\n{self.log()[-4000:]}")
            try:
                # The master accepts at once; the answer waits for a worker to boot.
                if requests.get(self.base + "/ok", timeout=10).status_code == 200:
                    return self
            except requests.RequestException:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"gunicorn {self.name} did not answer within {timeout}s:\n{self.log()[-4000:]}")

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def log(self):
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def __repr__(self):
        return f"<gunicorn {self.name} {self.origin}>"
