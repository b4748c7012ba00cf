"""A real gunicorn server (2 workers) on a loopback port, for tests that must cross a real HTTP stack.

Its database: on PostgreSQL (``DATABASE_URL`` set to postgres) a separate database ``<suite database>_fuzz`` on
the same server, recreated and migrated; otherwise a SQLite file in a temporary directory, migrated.
The rate limiter is off (``AUTH_RATE_LIMIT=false``) so fuzzing measures behaviour, not limits.
"""

import os
from pathlib import Path

from tests.peers.gunicorn import GunicornServer, migrate, postgres_url, recreate_postgres_database, suite_database


def database_url(workdir):
    if postgres_url():
        return recreate_postgres_database(suite_database("fuzz"))
    return f"sqlite:///{Path(workdir) / 'fuzz.sqlite3'}"


class LiveServer(GunicornServer):
    def __init__(self, workdir):
        workdir = Path(workdir)
        super().__init__("fuzz", env={}, log_path=workdir / "gunicorn.log", workers=2, worker_timeout=60,
                         graceful_timeout=5)
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "project.settings",
            "DATABASE_URL": database_url(workdir),
            "AUTH_BASE_URL": self.origin,
            "AUTH_RATE_LIMIT": "false",
            # The SAML Single Logout endpoints do their work, rather than answer "not enabled".
            "AUTH_SSO_SAML_ENABLE_SINGLE_LOGOUT": "true",
            "DEBUG": "false",
            "EMAIL_URL": "dummymail://",
            "PYTHONUNBUFFERED": "1",
        }

    def start(self, timeout=30):
        migrate(self.env)
        super().start()
        return self.wait_ready(timeout)

    def server_errors(self):
        """Tracebacks Django logged for 500s so far (the console handler of ``django.request``)."""
        return self.log().split("Internal Server Error: ")[1:]
