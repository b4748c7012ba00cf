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
that carry ``session_data`` (compare.sh's ``primed-ours-on.txt``) it profiles the cookie-cache path;
``--prime`` gives each cookie line a fresh ``session_data`` first, in-process (a primed file's caches
expire after max_age), so the plain ``cookies.txt`` serves as well.

Wall and CPU time move with the machine's load; instructions do not. Instructions per request under
callgrind, start-up, priming and warm-up excluded (small ``--requests`` and ``--warm-up`` keep it short)::

    valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no --toggle-collect=_operator_call \\
        --callgrind-out-file=cg.out "$(python -c 'import sys; print(sys.executable)')" \\
        bench/profile_get_session.py --cookies ... --requests 200 --callgrind
    grep ^totals: cg.out   # divided by --requests

``--callgrind`` turns callgrind's instrumentation on (``callgrind_control -i on``) only after start-up,
priming and warm-up, which would otherwise take minutes under it.
"""

import argparse
import cProfile
import io
import operator
import os
import pstats
import subprocess
import sys
import threading
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
    parser.add_argument("--prime", action="store_true",
                        help="give each cookie line a fresh session_data first (the cookie cache must be on)")
    parser.add_argument("--warm-up", type=int, default=200)
    parser.add_argument("--callgrind", action="store_true",
                        help="run under callgrind --instr-atstart=no: instrument only the measured requests")
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
    set_cookies = []

    def start_response(status, headers, exc_info=None):
        statuses.append(status)
        set_cookies[:] = [value for name, value in headers if name.lower() == "set-cookie"]

    if args.prime:
        cookies = [prime(application, start_response, set_cookies, cookie) for cookie in cookies]

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
    for _ in range(args.warm_up):
        one(_)

    if args.callgrind:
        instrument_from_here()

    def measured():
        for i in range(args.requests):
            one(i)

    wall0, cpu0 = time.perf_counter(), time.process_time()
    # Through operator.call (a C function nothing else here calls), so that callgrind counts the measured
    # requests alone: valgrind --tool=callgrind --collect-atstart=no --toggle-collect=_operator_call.
    operator.call(measured)
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


def instrument_from_here():
    """Ask callgrind to instrument this process from now on, and wait until it does: it reads the request
    between basic blocks, so this thread keeps running some while another one waits for the answer."""
    done = threading.Event()

    def ask():
        subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], capture_output=True, timeout=300,
                       check=False)
        done.set()

    threading.Thread(target=ask, daemon=True).start()
    while not done.is_set():
        sum(range(1000))


def prime(application, start_response, set_cookies, cookie):
    """``cookie`` (its token cookie only) plus the ``session_data`` cookies get-session sets for it."""
    token = "; ".join(part.strip() for part in cookie.split(";") if ".session_data" not in part)
    b"".join(application(environ_for(token, "127.0.0.1"), start_response))
    cached = [value.split(";", 1)[0] for value in set_cookies]
    cached = [pair for pair in cached if ".session_data" in pair.split("=", 1)[0] and pair.split("=", 1)[1]]
    if not cached:
        sys.exit("--prime: get-session set no session_data (is AUTH_SESSION_COOKIE_CACHE=true?)")
    return "; ".join([token, *cached])


if __name__ == "__main__":
    main()
