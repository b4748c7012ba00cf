"""Where a get-session request's time goes, without HTTP: the WSGI application called in a loop.

Run against a seeded database with the server's environment (bench/run.sh prints its work directory,
which holds cookies.txt)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/authservice_bench SECRET_KEY=... \\
    AUTH_RATE_LIMIT=false python bench/profile_get_session.py --cookies /tmp/authservice-bench.X/cookies.txt

Prints wall and CPU microseconds per request and the number of SQL queries per request; with
``--profile N`` also cProfile's top N functions by cumulative and by own time. ``--path /me/`` profiles
the example project's middleware path instead (``request.user`` from the same cookies). It calls
``project.wsgi.application`` (API requests skip the middleware they never use); ``--full-stack`` calls
Django's handler with every middleware instead. With ``AUTH_SESSION_COOKIE_CACHE=true`` and cookies
that carry ``session_data`` (compare.sh's ``primed-ours-on.txt``) it profiles the cookie-cache path.
"""

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")


def environ_for(cookie, host, path="/api/auth/get-session"):
    return {
        "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": "",
        "SERVER_NAME": host, "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": host, "HTTP_COOKIE": cookie, "HTTP_USER_AGENT": "profile", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
        "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cookies", required=True)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--path", default="/api/auth/get-session")
    parser.add_argument("--full-stack", action="store_true", help="Django's handler with every middleware")
    args = parser.parse_args()

    from django.db import connection

    # What a server runs: the example project's WSGI application, with its lean API path
    # (authservice.wsgi). Pass --full-stack for Django's handler with every middleware.
    if args.full_stack:
        from django.core.wsgi import get_wsgi_application

        application = get_wsgi_application()
    else:
        from project.wsgi import application
    cookies = [line.strip() for line in open(args.cookies) if line.strip()]
    statuses = []

    def start_response(status, headers, exc_info=None):
        statuses.append(status)

    def one(i):
        body = b"".join(application(environ_for(cookies[i % len(cookies)], "127.0.0.1", args.path),
                                    start_response))
        return body

    body = one(0)
    assert statuses[-1].startswith("200") and b'"email"' in body, (statuses[-1], body[:200])
    queries = []

    def record(execute, sql, params, many, context):
        queries.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        one(1)
    for _ in range(200):  # warm-up
        one(_)

    wall0, cpu0 = time.perf_counter(), time.process_time()
    for i in range(args.requests):
        one(i)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(f"{args.requests} requests: {1e6 * wall / args.requests:.0f} us wall, "
          f"{1e6 * cpu / args.requests:.0f} us CPU per request; {len(queries)} SQL per request")
    for sql in queries:
        print("  SQL:", sql)
    if connection.settings_dict.get("CONN_HEALTH_CHECKS"):
        print("  plus one health check (SELECT 1) per request on a reused connection: CONN_HEALTH_CHECKS")

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for i in range(args.requests):
            one(i)
        profiler.disable()
        for order in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order).print_stats(args.profile)
            print(out.getvalue())


if __name__ == "__main__":
    main()
