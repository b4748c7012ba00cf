"""Where a SAML ACS request's time goes, without HTTP: the WSGI application called once per pool line.

The pool answers AuthnRequests stored in the benchmark database, so it is made by ``saml_pool.py``
against a server started with the same environment (bench/README.md shows the commands); the
server can be stopped before this runs. Each line is used once: replay protection is always on.

Prints wall and CPU milliseconds per request, the SQL statements and xmlsec1 runs per request; with
``--profile N`` also cProfile's top N functions by cumulative and by own time.

Wall and CPU time move with the machine's load; instructions do not. Instructions per request under
callgrind, start-up and warm-up excluded (the pool needs ``--warm-up`` + ``--requests`` + 1 lines)::

    valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no --toggle-collect=_operator_call \\
        --callgrind-out-file=cg.out "$(python -c 'import sys; print(sys.executable)')" \\
        bench/profile_saml_acs.py --pool ... --warm-up 15 --requests 30 --callgrind
    grep ^totals: cg.out   # divided by --requests
"""

import argparse
import cProfile
import io
import operator
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

ACS = "/api/auth/sso/saml2/callback/bench-saml"


def environ_for(line, base):
    body, _, relay_cookie = line.partition("\t")  # saml_pool.py: the form body and the relay_state cookie
    target = urlsplit(base)
    data = body.encode()
    return {
        "REQUEST_METHOD": "POST", "PATH_INFO": ACS, "QUERY_STRING": "", "SERVER_NAME": target.hostname,
        "SERVER_PORT": str(target.port or 80), "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": target.netloc, "HTTP_ORIGIN": "https://idp.bench.test", "HTTP_USER_AGENT": "profile",
        "HTTP_COOKIE": relay_cookie,
        "CONTENT_TYPE": "application/x-www-form-urlencoded", "CONTENT_LENGTH": str(len(data)),
        "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(data), "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0), "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pool", required=True)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--warm-up", type=int, default=20)
    parser.add_argument("--callgrind", action="store_true",
                        help="run under callgrind --instr-atstart=no: instrument only the measured requests")
    args = parser.parse_args()
    base = os.environ["AUTH_BASE_URL"]

    from django.core.wsgi import get_wsgi_application
    from django.db import connection

    application = get_wsgi_application()
    bodies = iter([line.strip() for line in open(args.pool) if line.strip()])
    seen = []

    def start_response(status, headers, exc_info=None):
        seen.append((status, dict(headers).get("Location", "")))

    def one():
        b"".join(application(environ_for(next(bodies), base), start_response))
        status, location = seen[-1]
        assert status.startswith("302") and "error=" not in location, (status, location)

    for _ in range(args.warm_up):
        one()
    queries, runs = [], []

    def record(execute, sql, params, many, context):
        queries.append(sql)
        return execute(sql, params, many, context)

    popen_init = subprocess.Popen.__init__

    def counting_init(self, command, *a, **k):
        runs.append(command[0] if isinstance(command, list) else command)
        popen_init(self, command, *a, **k)

    subprocess.Popen.__init__ = counting_init
    with connection.execute_wrapper(record):
        one()
    subprocess.Popen.__init__ = popen_init

    count = args.requests
    if args.callgrind:
        from profile_get_session import instrument_from_here

        instrument_from_here()

    def measured():
        for _ in range(count):
            one()

    wall0, cpu0 = time.perf_counter(), time.process_time()
    # Through operator.call, so that callgrind's --toggle-collect=_operator_call counts these alone.
    operator.call(measured)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(f"{count} ACS requests: {1e3 * wall / count:.1f} ms wall, {1e3 * cpu / count:.1f} ms CPU of this "
          f"process per request; {len(queries)} SQL and {len(runs)} subprocess runs ({', '.join(runs)}) per request")
    for sql in queries:
        print("  SQL:", sql[:160])

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(count):
            one()
        profiler.disable()
        for order in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order).print_stats(args.profile)
            print(out.getvalue())


if __name__ == "__main__":
    main()
