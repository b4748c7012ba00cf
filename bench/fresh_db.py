"""Drop and recreate the benchmark database: ``fresh_db.py postgres://user@host:port/name``."""

import sys
from urllib.parse import urlsplit

import psycopg
from psycopg import sql


def main():
    url = urlsplit(sys.argv[1])
    name = url.path.lstrip("/")
    admin = url._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


if __name__ == "__main__":
    main()
