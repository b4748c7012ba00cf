"""How a request's cost grows with the data (issue 18 §4): each row measured with N rows in its tables.

``scaling.py --sizes 1000,100000,1000000 --databases A,B,C`` seeds each (fresh, migrated) database to its
N rows per table (``scaling_seed.py``), measures every row on all of them taking turns, then runs the
cleanup row on each, and prints the Markdown table (``--out`` keeps the raw figures as JSON).
``bench/scaling.sh`` makes the databases and runs it.

Method: the WSGI application called in-process (no HTTP: the same middleware, settings and SQL as the
server, one Python process, one PostgreSQL connection), as ``two_factor.py`` does. The sizes take turns:
``--blocks`` rounds, each running a block of every row on every size (the order of the sizes reversed
every other round), switching the one connection from database to database, so that load from other work
on the machine falls on every size alike. Reported per row and size: wall time per request (p50, p99), the
CPU of this process and of the PostgreSQL backend per request (from /proc). Rows:

- get-session: a random one of the N live sessions per request;
- sign-in: a random one of the N users per request, password hashed with MD5 (so what is left is
  the per-request cost besides the hash: the user and account lookups, the session insert);
- list-sessions: user 0, who has 1,000 live sessions among the N;
- SAML ACS: SP-initiated sign-ins (``/sign-in/sso`` in-process right before each block, the response
  signed with xmlsec1 as ``saml_pool.py`` does), with N replay tombstones and N / 10 other pending
  AuthnRequests stored;
- rate limiter: ``authservice.ratelimit.hit`` on the database store, a random one of the N live
  windows per call (the UPDATE that counts the hit and the read of the count);
- cleanup: ``manage.py authservice_cleanup`` in a child process deleting N expired sessions, its wall
  time, and get-session's p50 / p99 in this process while it runs.
"""

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

HOST = "127.0.0.1"
ORIGIN = f"http://{HOST}"  # the script's AUTH_BASE_URL: the ACS URL is signed into each response
PASSWORD = "scale password 1"
REQUEST_ROWS = ("get-session", "sign-in", "list-sessions", "saml-acs", "rate-limit")
LINKED_USERS = 200  # users 0-199 have a bench-saml account (NameID = their e-mail)


class Caller:
    """The WSGI application, called as gunicorn would call it."""

    def __init__(self, application):
        self.application = application

    def __call__(self, method, path, *, body=b"", content_type="", cookie="", origin=ORIGIN):
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "CONTENT_TYPE": content_type,
            "CONTENT_LENGTH": str(len(body)), "SERVER_NAME": HOST, "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": HOST, "HTTP_ORIGIN": origin,
            "HTTP_COOKIE": cookie, "HTTP_USER_AGENT": "scale", "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
            "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
        }
        seen = {}

        def start_response(status, headers, exc_info=None):
            seen["status"], seen["headers"] = status, headers

        raw = b"".join(self.application(environ, start_response))
        return int(seen["status"][:3]), raw, seen["headers"]

    def json(self, method, path, payload=None, cookie=""):
        status, raw, headers = self(method, "/api/auth" + path, cookie=cookie,
                                    body=json.dumps(payload).encode() if payload is not None else b"",
                                    content_type="application/json" if payload is not None else "")
        return status, json.loads(raw or b"null"), headers


def set_cookies(headers):
    return "; ".join(value.split(";", 1)[0] for key, value in headers if key.lower() == "set-cookie")


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def backend_cpu():
    """CPU seconds (user + system) of this connection's PostgreSQL backend so far, from /proc: what
    the database spends, which other load on the machine changes much less than wall time."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # PostgreSQL on another machine
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Samples:
    """One row's figures on one size, gathered over several blocks."""

    def __init__(self):
        self.walls, self.cpu, self.pg_cpu = [], 0.0, 0.0

    def block(self, one, arguments, warm_up=5):
        """Call ``one(argument)`` for each argument, the first ``warm_up`` unmeasured."""
        for argument in arguments[:warm_up]:
            one(argument)
        cpu, pg_cpu = time.process_time(), backend_cpu()
        for argument in arguments[warm_up:]:
            started = time.perf_counter()
            one(argument)
            self.walls.append(1000 * (time.perf_counter() - started))
        self.cpu += time.process_time() - cpu
        self.pg_cpu += backend_cpu() - pg_cpu

    def summary(self):
        calls = len(self.walls)
        return {"p50": statistics.median(self.walls), "p99": percentile(self.walls, 0.99),
                "cpu": 1000 * self.cpu / calls, "pg cpu": 1000 * self.pg_cpu / calls, "calls": calls}


def session_cookie(token):
    from authservice.cookies import SESSION_TOKEN, cookie_name, signed_value

    return f"{cookie_name(SESSION_TOKEN)}={signed_value(token)}"


# Each row: ``row(call, size, count)`` answers (one, arguments): one request per argument.
def get_session_row(call, size, count):
    import scaling_seed

    def one(i):
        status, body, _ = call.json("GET", "/get-session", cookie=session_cookie(scaling_seed.session_token(i)))
        assert status == 200 and body and body["session"]["token"] == scaling_seed.session_token(i), (status, body)

    return one, [random.randrange(size) for _ in range(count)]


def sign_in_row(call, size, count):
    import scaling_seed

    def one(i):
        status, body, _ = call.json("POST", "/sign-in/email",
                                    {"email": scaling_seed.user_email(i), "password": PASSWORD})
        assert status == 200 and body.get("token"), (status, body)

    return one, [random.randrange(size) for _ in range(count)]


def list_sessions_row(call, size, count):
    import scaling_seed

    cookie = session_cookie(scaling_seed.many_session_token(0))

    def one(_):
        status, body, _ = call.json("GET", "/list-sessions", cookie=cookie)
        # better-auth's cap (authservice.flows.sessions.LIST_LIMIT) out of the user's 1,000 and more
        assert status == 200 and len(body) == 100, (status, body)

    return one, list(range(count))


def rate_limit_row(call, size, count):
    import scaling_seed
    from authservice import ratelimit

    def one(i):
        assert ratelimit.hit(scaling_seed.rate_limit_name(i), 3600, 10**9) is None

    return one, [random.randrange(size) for _ in range(count)]


def saml_acs_row(call, pool):
    def one(entry):
        form, cookie = entry
        status, _, headers = call("POST", "/api/auth/sso/saml2/callback/bench-saml", body=form, cookie=cookie,
                                  content_type="application/x-www-form-urlencoded",
                                  origin="https://idp.bench.test")
        location = dict(headers).get("Location", "")
        assert status == 302 and "error=" not in location, (status, location)

    return one, pool


ROWS = {"get-session": get_session_row, "sign-in": sign_in_row, "list-sessions": list_sessions_row,
        "rate-limit": rate_limit_row}


def saml_pool(call, count, keypair, tmp):
    """``count`` SP-initiated sign-ins answered by signed responses: [(form body, relay_state cookie)]."""
    import scaling_seed
    from saml_pool import SAML_IDP_ENTITY_ID, SAML_PROVIDER, SAML_SP_ENTITY_ID, VALIDITY
    from tests.sso.saml import idp_signer

    from defusedxml import ElementTree

    pool = []
    for n in range(count):
        status, body, headers = call.json("POST", "/sign-in/sso", {"providerId": SAML_PROVIDER,
                                                                   "callbackURL": "/dashboard"})
        assert status == 200, (status, body)
        cookie = next(part for part in set_cookies(headers).split("; ")
                      if part.split("=", 1)[0].endswith("relay_state"))
        query = parse_qs(urlsplit(body["url"]).query)
        root = ElementTree.fromstring(idp_signer.authn_request(query["SAMLRequest"][0]))
        email = scaling_seed.user_email(n % LINKED_USERS)
        issued = idp_signer.now()
        claims = idp_signer.Claims(
            issuer=SAML_IDP_ENTITY_ID, destination=root.get("AssertionConsumerServiceURL"),
            audience=SAML_SP_ENTITY_ID, in_response_to=root.get("ID"), name_id=email,
            attributes={"email": email, "displayName": email.split("@")[0]}, issue_instant=issued,
            not_on_or_after=issued + VALIDITY,
        )
        signed = idp_signer.sign(idp_signer.response_xml(claims), keypair, claims.assertion_id, tmp)
        form = urlencode({"SAMLResponse": idp_signer.encode(signed), "RelayState": query["RelayState"][0]})
        pool.append((form.encode(), cookie))
    return pool


CLEANUP = """
import sys, time
sys.path.insert(0, %r)
import django
django.setup()
from django.core.management import call_command
print("ready", flush=True)
started = time.perf_counter()
call_command("authservice_cleanup")
print("seconds", time.perf_counter() - started)
""" % str(HERE.parent)


def cleanup_row(call, size, database):
    """authservice_cleanup deleting ``size`` expired sessions, get-session measured while it runs."""
    import scaling_seed

    started = time.perf_counter()
    scaling_seed.seed_expired_sessions(size)
    seeded = time.perf_counter() - started
    # The command as cron runs it, in its own process; timed from when Django is set up in it.
    command = subprocess.Popen([sys.executable, "-c", CLEANUP], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env={**os.environ, "DATABASE_URL": database})
    assert command.stdout.readline().strip() == "ready"
    walls = []
    while command.poll() is None:
        i = random.randrange(size)
        began = time.perf_counter()
        status, body, _ = call.json("GET", "/get-session", cookie=session_cookie(scaling_seed.session_token(i)))
        walls.append(1000 * (time.perf_counter() - began))
        assert status == 200 and body, (status, body)
    output = command.stdout.read()
    assert command.returncode == 0, output
    seconds = float(output.rsplit("seconds ", 1)[1])
    deleted = next(int(line.split(": ")[1].split()[0]) for line in output.splitlines() if line.startswith("Session:"))
    assert deleted == size, output
    return {"seconds": seconds, "deleted": deleted, "seed seconds": seeded, "get-session calls": len(walls),
            "get-session p50": statistics.median(walls) if walls else None,
            "get-session p99": percentile(walls, 0.99) if walls else None}


def use_database(url):
    """Point the one ``default`` connection at the database of ``url`` (same server, same schema)."""
    from django.db import connections

    connection = connections["default"]
    connection.close()
    connection.settings_dict["NAME"] = urlsplit(url).path.lstrip("/")


def register_saml_provider(keypair):
    """bench-saml for example.com, as seed.py registers it, with the first users linked to it."""
    from django.contrib.auth import get_user_model
    from seed import seed_saml_provider

    import scaling_seed

    users = list(get_user_model().objects.filter(pk__in=[scaling_seed.user_id(i) for i in range(LINKED_USERS)]))
    seed_saml_provider(users, keypair.cert_pem)


def measure(sizes, databases, rounds, blocks, acs_rounds):
    import django
    from django.conf import settings

    django.setup()
    # MD5: the sign-in row is the request's cost besides the hash (two_factor.py --fast-hash does the same).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.AUTHSERVICE = {**settings.AUTHSERVICE,
                            "rate_limit": {**settings.AUTHSERVICE.get("rate_limit", {}), "storage": "database"}}
    from datetime import timedelta

    from django.contrib.auth.hashers import make_password
    from django.core.wsgi import get_wsgi_application
    from django.utils import timezone

    import scaling_seed
    from authservice import app_settings
    from tests.sso.saml import idp_signer

    call = Caller(get_wsgi_application())
    runs = {size: {"size": size} for size in sizes}
    samples = {size: {row: Samples() for row in REQUEST_ROWS} for size in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        keypair = idp_signer.make_keypair(Path(tmp))
        for size, database in zip(sizes, databases, strict=True):
            use_database(database)
            log(f"N={size}: seeding")
            started = time.perf_counter()
            expires = timezone.now() + timedelta(seconds=app_settings.session.expires_in)
            runs[size]["rows"] = scaling_seed.seed(size, make_password(PASSWORD), expires)
            runs[size]["seed seconds"] = time.perf_counter() - started
            register_saml_provider(keypair)
        runs["load before"] = os.getloadavg()
        runs["started"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        per_block = max(rounds // blocks, 1)
        for block in range(blocks):
            log(f"round {block + 1} of {blocks}, load {os.getloadavg()[0]:.2f}")
            for size, database in (list(zip(sizes, databases)) if block % 2 == 0
                                   else list(zip(sizes, databases))[::-1]):
                use_database(database)
                for row, make in ROWS.items():
                    samples[size][row].block(*make(call, size, per_block + 5))
                # AuthnRequests live 5 minutes: each block answers fresh ones.
                pool = saml_pool(call, max(acs_rounds // blocks, 1) + 5, keypair, tmp)
                samples[size]["saml-acs"].block(*saml_acs_row(call, pool))
        runs["load after"] = os.getloadavg()
        for size, database in zip(sizes, databases):
            use_database(database)
            runs[size].update({row: samples[size][row].summary() for row in REQUEST_ROWS})
            log(f"N={size}: cleanup")
            runs[size]["cleanup"] = cleanup_row(call, size, database)
            runs[size]["cleanup load"] = os.getloadavg()
    return runs


def log(message):
    print(f"[scale {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def report(runs):
    """The Markdown table, one column per size."""
    sizes = sorted(size for size in runs if isinstance(size, int))
    head = " | ".join(f"N = {size:,}" for size in sizes)
    print(f"| row: p50 ms (p99); CPU ms/request Python + PostgreSQL | {head} | p50 at largest / smallest |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    for row in REQUEST_ROWS:
        cells = " | ".join(f"{runs[size][row]['p50']:.2f} ({runs[size][row]['p99']:.1f}); "
                           f"{runs[size][row]['cpu']:.2f} + {runs[size][row]['pg cpu']:.2f}" for size in sizes)
        print(f"| {row} | {cells} | {runs[sizes[-1]][row]['p50'] / runs[sizes[0]][row]['p50']:.2f} |")
    print("| cleanup: N expired sessions deleted, s | "
          + " | ".join(f"{runs[size]['cleanup']['seconds']:.1f}" for size in sizes) + " | |")
    during = [runs[size]["cleanup"] for size in sizes]
    print("| get-session while the cleanup runs: p50 (p99) | "
          + " | ".join(f"{run['get-session p50']:.2f} ({run['get-session p99']:.1f})" for run in during) + " | |")
    print("| load average (1 min) when the cleanup started | "
          + " | ".join(f"{runs[size]['cleanup load'][0]:.2f}" for size in sizes) + " | |")
    print()
    print(f"Request rows from {runs['started']}, load average {' '.join(f'{x:.2f}' for x in runs['load before'])} "
          f"before and {' '.join(f'{x:.2f}' for x in runs['load after'])} after.")
    for size in sizes:
        print(f"- N = {size:,}: seeded in {runs[size]['seed seconds']:.0f} s "
              f"({', '.join(f'{table} {count:,}' for table, count in runs[size]['rows'].items())}); "
              f"{runs[size]['get-session']['calls']} requests per row")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,100000,1000000", help="rows per table, comma-separated")
    parser.add_argument("--databases", help="one fresh, migrated database URL per size, comma-separated")
    parser.add_argument("--rounds", type=int, default=400, help="measured requests per row and size")
    parser.add_argument("--acs-rounds", type=int, default=160, help="measured SAML ACS requests per size")
    parser.add_argument("--blocks", type=int, default=8, help="turns the sizes take")
    parser.add_argument("--out", help="write the raw figures (JSON) to this file")
    parser.add_argument("--report", help="print the table of a file written by --out, and stop")
    args = parser.parse_args()
    if args.report:
        report(fix_keys(json.loads(Path(args.report).read_text())))
        return
    sizes = [int(size) for size in args.sizes.replace(" ", ",").split(",") if size]
    databases = (args.databases or "").split(",")
    if len(databases) != len(sizes):
        parser.error("--databases needs one URL per size")
    runs = measure(sizes, databases, args.rounds, args.blocks, args.acs_rounds)
    if args.out:
        Path(args.out).write_text(json.dumps(runs, indent=1))
    report(fix_keys(json.loads(json.dumps(runs))))


def fix_keys(runs):
    """JSON keeps the sizes as strings."""
    return {int(key) if key.isdigit() else key: value for key, value in runs.items()}


if __name__ == "__main__":
    main()
