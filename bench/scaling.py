"""How a request's cost grows with the data (issue 18 §4): each row measured with N rows in its tables.

``scaling.py --size N --out FILE`` seeds the (fresh, migrated) database of DATABASE_URL to N rows per
table (``scaling_seed.py``), measures every row and appends one JSON line to FILE;
``scaling.py --report FILE`` prints the Markdown table. ``bench/scaling.sh`` runs the sizes in order,
each on a fresh database.

Method: the WSGI application called in-process (no HTTP: the same middleware, settings and SQL as the
server, one Python process, one PostgreSQL connection), as ``two_factor.py`` does; wall time per request
(p50, p99) and this process's CPU per request. Rows:

- get-session: a random one of the N live sessions per request;
- sign-in: a random one of the N users per request, password hashed with MD5 (so what is left is
  the per-request cost besides the hash: the user and account lookups, the session insert);
- list-sessions: user 0, who has 1,000 live sessions among the N;
- SAML ACS: SP-initiated sign-ins (``/sign-in/sso`` in-process, the response signed with xmlsec1 as
  ``saml_pool.py`` does), with N replay tombstones and N / 10 other pending AuthnRequests stored;
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


def timed(one, arguments, warm_up=20):
    """Call ``one(argument)`` for each argument: {p50, p99 wall ms, cpu ms per call (this process),
    pg cpu ms per call (the PostgreSQL backend), calls}."""
    for argument in arguments[:warm_up]:
        one(argument)
    walls = []
    cpu, pg_cpu = time.process_time(), backend_cpu()
    for argument in arguments[warm_up:]:
        started = time.perf_counter()
        one(argument)
        walls.append(1000 * (time.perf_counter() - started))
    cpu = 1000 * (time.process_time() - cpu) / len(walls)
    pg_cpu = 1000 * (backend_cpu() - pg_cpu) / len(walls)
    return {"p50": statistics.median(walls), "p99": percentile(walls, 0.99), "cpu": cpu, "pg cpu": pg_cpu,
            "calls": len(walls)}


def session_cookie(token):
    from authservice.cookies import SESSION_TOKEN, cookie_name, signed_value

    return f"{cookie_name(SESSION_TOKEN)}={signed_value(token)}"


def get_session_row(call, size, rounds):
    import scaling_seed

    def one(i):
        status, body, _ = call.json("GET", "/get-session", cookie=session_cookie(scaling_seed.session_token(i)))
        assert status == 200 and body and body["session"]["token"] == scaling_seed.session_token(i), (status, body)

    return timed(one, [random.randrange(size) for _ in range(rounds + 20)])


def sign_in_row(call, size, rounds):
    import scaling_seed

    def one(i):
        status, body, _ = call.json("POST", "/sign-in/email",
                                    {"email": scaling_seed.user_email(i), "password": PASSWORD})
        assert status == 200 and body.get("token"), (status, body)

    return timed(one, [random.randrange(size) for _ in range(rounds + 20)])


def list_sessions_row(call, size, rounds):
    import scaling_seed

    cookie = session_cookie(scaling_seed.many_session_token(0))
    answers = []

    def one(_):
        status, body, _ = call.json("GET", "/list-sessions", cookie=cookie)
        assert status == 200 and body, (status, body)
        answers.append(len(body))

    result = timed(one, list(range(rounds + 20)))
    result["sessions answered"] = answers[-1]
    return result


def rate_limit_row(call, size, rounds):
    import scaling_seed
    from authservice import ratelimit

    def one(i):
        assert ratelimit.hit(scaling_seed.rate_limit_name(i), 3600, 10**9) is None

    return timed(one, [random.randrange(size) for _ in range(rounds + 20)])


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
        cookie = next(part for part in set_cookies(headers).split("; ") if part.split("=", 1)[0].endswith("relay_state"))
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


def saml_acs_row(call, size, rounds, keypair, tmp):
    pool = saml_pool(call, rounds + 20, keypair, tmp)

    def one(entry):
        form, cookie = entry
        status, _, headers = call("POST", "/api/auth/sso/saml2/callback/bench-saml", body=form, cookie=cookie,
                                  content_type="application/x-www-form-urlencoded",
                                  origin="https://idp.bench.test")
        location = dict(headers).get("Location", "")
        assert status == 302 and "error=" not in location, (status, location)

    return timed(one, pool)


def cleanup_row(call, size):
    """authservice_cleanup deleting ``size`` expired sessions, get-session measured while it runs."""
    import scaling_seed

    started = time.perf_counter()
    scaling_seed.seed_expired_sessions(size)
    seeded = time.perf_counter() - started
    command = subprocess.Popen([sys.executable, str(HERE.parent / "manage.py"), "authservice_cleanup"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started = time.perf_counter()
    walls = []
    while command.poll() is None:
        i = random.randrange(size)
        began = time.perf_counter()
        status, body, _ = call.json("GET", "/get-session", cookie=session_cookie(scaling_seed.session_token(i)))
        walls.append(1000 * (time.perf_counter() - began))
        assert status == 200 and body, (status, body)
    seconds = time.perf_counter() - started
    output = command.stdout.read()
    assert command.returncode == 0, output
    deleted = next(int(line.split(": ")[1].split()[0]) for line in output.splitlines() if line.startswith("Session:"))
    assert deleted == size, output
    return {"seconds": seconds, "deleted": deleted, "seed seconds": seeded, "get-session calls": len(walls),
            "get-session p50": statistics.median(walls) if walls else None,
            "get-session p99": percentile(walls, 0.99) if walls else None}


def statements(call, size):
    """SQL statements per request of each row (their count must not depend on N)."""
    import scaling_seed
    from django.db import connection

    seen = []

    def record(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        call.json("GET", "/get-session", cookie=session_cookie(scaling_seed.session_token(size - 1)))
    return len(seen)


def measure(size, rounds, acs_rounds):
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

    load = os.getloadavg()
    started = time.perf_counter()
    expires = timezone.now() + timedelta(seconds=app_settings.session.expires_in)
    rows = scaling_seed.seed(size, make_password(PASSWORD), expires)
    seed_seconds = time.perf_counter() - started
    call = Caller(get_wsgi_application())
    results = {"size": size, "load": load, "seed seconds": seed_seconds, "rows": rows,
               "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with tempfile.TemporaryDirectory() as tmp:
        keypair = idp_signer.make_keypair(Path(tmp))
        register_saml_provider(keypair)
        results["get-session"] = get_session_row(call, size, rounds)
        results["get-session SQL"] = statements(call, size)
        results["sign-in"] = sign_in_row(call, size, rounds)
        results["list-sessions"] = list_sessions_row(call, size, rounds)
        results["rate-limit"] = rate_limit_row(call, size, rounds)
        results["saml-acs"] = saml_acs_row(call, size, acs_rounds, keypair, tmp)
    results["load after"] = os.getloadavg()
    results["cleanup"] = cleanup_row(call, size)
    return results


def register_saml_provider(keypair):
    """bench-saml for example.com, as seed.py registers it, with the first 200 users linked to it."""
    from seed import seed_saml_provider

    from django.contrib.auth import get_user_model

    import scaling_seed

    users = list(get_user_model().objects.filter(pk__in=[scaling_seed.user_id(i) for i in range(LINKED_USERS)]))
    seed_saml_provider(users, keypair.cert_pem)


def report(lines):
    """The Markdown table of the JSON lines, one column per size."""
    runs = sorted((json.loads(line) for line in lines if line.strip()), key=lambda run: run["size"])
    sizes = [run["size"] for run in runs]
    head = " | ".join(f"N = {size:,}" for size in sizes)
    print(f"| row: p50 ms (p99); CPU ms/request Python + PostgreSQL | {head} | p50 at largest / smallest |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    print("| load average (1 min) before the run | " + " | ".join(f"{run['load'][0]:.2f}" for run in runs) + " | |")
    for row in REQUEST_ROWS:
        cells = " | ".join(f"{run[row]['p50']:.2f} ({run[row]['p99']:.1f}); {run[row]['cpu']:.2f} + "
                           f"{run[row].get('pg cpu', float('nan')):.2f}" for run in runs)
        ratio = runs[-1][row]["p50"] / runs[0][row]["p50"]
        print(f"| {row} | {cells} | {ratio:.2f} |")
    print("| cleanup: N expired sessions deleted, seconds | "
          + " | ".join(f"{run['cleanup']['seconds']:.1f}" for run in runs) + " | |")
    print("| get-session during the cleanup: p50 / p99 ms | "
          + " | ".join(f"{run['cleanup']['get-session p50']:.2f} / {run['cleanup']['get-session p99']:.1f}"
                       for run in runs) + " | |")
    print()
    for run in runs:
        print(f"- N = {run['size']:,} at {run['at']}: load {' '.join(f'{x:.2f}' for x in run['load'])} before, "
              f"{' '.join(f'{x:.2f}' for x in run['load after'])} after; seeded in {run['seed seconds']:.0f} s "
              f"({', '.join(f'{table} {count:,}' for table, count in run['rows'].items())}); "
              f"list-sessions answered {run['list-sessions']['sessions answered']} sessions; "
              f"get-session ran {run['get-session SQL']} SQL statements")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, help="rows per table (the database must be fresh and migrated)")
    parser.add_argument("--rounds", type=int, default=400, help="measured requests per row")
    parser.add_argument("--acs-rounds", type=int, default=150, help="measured SAML ACS requests")
    parser.add_argument("--out", help="append this size's results (one JSON line) to this file")
    parser.add_argument("--report", help="print the table of this file's results")
    args = parser.parse_args()
    if args.report:
        report(Path(args.report).read_text().splitlines())
        return
    if not args.size or not args.out:
        parser.error("--size and --out, or --report")
    results = measure(args.size, args.rounds, args.acs_rounds)
    with open(args.out, "a") as out:
        out.write(json.dumps(results) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
