"""The added cost of a second factor: "sign-in" (password) against "sign-in + TOTP" (password, then
/two-factor/verify-totp), through the WSGI application in-process (no HTTP; the same application,
middleware and hashers as the server: authservice.wsgi's API path, as project/wsgi.py serves it). Target: the TOTP step adds under 5 ms at p50.

Run with bench/two_factor.sh (fresh PostgreSQL database, migrate, then this). Each round signs in one
password-only user and one user with TOTP, interleaved, so both see the same machine load; each TOTP
user is used once (a code is accepted once per time step). Prints p50/p90 wall ms of each, the p50 of
the per-round difference, the verify-totp request alone, and CPU ms per operation.
"""

import argparse
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

HOST = "127.0.0.1"
ORIGIN = f"http://{HOST}"
PASSWORD = "bench password 1"


def environ_for(path, body, cookie=""):
    data = json.dumps(body).encode()
    return {
        "REQUEST_METHOD": "POST", "PATH_INFO": path, "QUERY_STRING": "", "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(data)), "SERVER_NAME": HOST, "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": HOST, "HTTP_ORIGIN": ORIGIN,
        "HTTP_COOKIE": cookie, "HTTP_USER_AGENT": "bench", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(data), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
        "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
    }


class Caller:
    def __init__(self, application):
        self.application = application

    def post(self, path, body, cookie=""):
        """``(status, json body, "name=value; ..." of the cookies set)``."""
        seen = {}

        def start_response(status, headers, exc_info=None):
            seen["status"], seen["headers"] = status, headers

        raw = b"".join(self.application(environ_for("/api/auth" + path, body, cookie), start_response))
        cookies = "; ".join(value.split(";", 1)[0] for key, value in seen["headers"] if key.lower() == "set-cookie")
        return int(seen["status"][:3]), json.loads(raw or b"null"), cookies


def seed(count):
    """``count`` password-only users and ``count`` users with TOTP on; returns (emails, [(email, secret)])."""
    import pyotp
    from django.contrib.auth.hashers import make_password

    from authservice import users
    from authservice.models import TwoFactor
    from authservice import two_factor
    from authservice.two_factor import crypto

    hashed = make_password(PASSWORD)  # one hash, reused: seeding stays quick, sign-in still verifies one
    plain, with_totp = [], []
    for i in range(count):
        email = f"plain{i}@example.com"
        users.create(email=email, password_hash=hashed, name="Bench")
        plain.append(email)
        email = f"totp{i}@example.com"
        user = users.create(email=email, password_hash=hashed, name="Bench")
        secret = pyotp.random_base32()
        TwoFactor.objects.create(user=user, secret=crypto.encrypt(secret), verified=True)
        two_factor.turn_on(user)  # as /two-factor/verify-totp does at enrolment
        with_totp.append((email, secret))
    return plain, with_totp


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--fast-hash", action="store_true",
                        help="MD5 instead of the project's argon2: the added cost without the hash's noise")
    parser.add_argument("--callgrind-regions", action="store_true",
                        help="no timing: each row inside a C function nothing else calls, for callgrind (README)")
    args = parser.parse_args()

    import django
    from django.conf import settings

    django.setup()
    if args.fast_hash:
        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    import pyotp
    from django.core.wsgi import get_wsgi_application

    from authservice import wsgi

    # What the server runs (project/wsgi.py): API paths on the lean middleware stack.
    caller = Caller(wsgi.application(get_wsgi_application()))
    plain, with_totp = seed(args.rounds + 3)

    def sign_in(email):
        status, body, _ = caller.post("/sign-in/email", {"email": email, "password": PASSWORD})
        assert status == 200 and body.get("token"), (status, body)

    def sign_in_with_totp(email, secret):
        status, body, cookie = caller.post("/sign-in/email", {"email": email, "password": PASSWORD})
        assert status == 200 and body.get("twoFactorRedirect"), (status, body)
        started = time.perf_counter()
        status, body, _ = caller.post("/two-factor/verify-totp", {"code": pyotp.TOTP(secret).now()}, cookie)
        assert status == 200 and body.get("token"), (status, body)
        return time.perf_counter() - started

    for i in range(2):  # warm-up: imports, compiled SQL, connections
        sign_in(plain[-1 - i])
        sign_in_with_totp(*with_totp[-1 - i])
    if args.callgrind_regions:
        callgrind_regions(args.rounds, plain, with_totp, sign_in, caller)
        return
    from django.db import connection

    statements = {"sign-in": [], "sign-in + TOTP": []}

    def recorder(name):
        def record(execute, sql, params, many, context):
            statements[name].append(sql.split(None, 1)[0].upper())
            return execute(sql, params, many, context)
        return record

    with connection.execute_wrapper(recorder("sign-in")):
        sign_in(plain[-3])
    with connection.execute_wrapper(recorder("sign-in + TOTP")):
        sign_in_with_totp(*with_totp[-3])

    plain_ms, totp_ms, verify_ms, cpu_plain, cpu_totp = [], [], [], 0.0, 0.0
    for i in range(args.rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        sign_in(plain[i])
        plain_ms.append(1000 * (time.perf_counter() - wall))
        cpu_plain += time.process_time() - cpu
        wall, cpu = time.perf_counter(), time.process_time()
        verify = sign_in_with_totp(*with_totp[i])
        totp_ms.append(1000 * (time.perf_counter() - wall))
        cpu_totp += time.process_time() - cpu
        verify_ms.append(1000 * verify)

    differences = [b - a for a, b in zip(plain_ms, totp_ms, strict=True)]
    hasher = settings.PASSWORD_HASHERS[0].rsplit(".", 1)[-1]
    print(f"{args.rounds} rounds, hasher {hasher}, load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores")
    for name, seen in statements.items():
        writes = sum(1 for verb in seen if verb in ("INSERT", "UPDATE", "DELETE"))
        print(f"{name}: {len(seen)} SQL statements, {writes} writes")
    print("| row | p50 ms | p90 ms | CPU ms/op |")
    print("|---|---:|---:|---:|")
    print(f"| sign-in | {statistics.median(plain_ms):.1f} | {percentile(plain_ms, 0.9):.1f} "
          f"| {1000 * cpu_plain / args.rounds:.1f} |")
    print(f"| sign-in + TOTP | {statistics.median(totp_ms):.1f} | {percentile(totp_ms, 0.9):.1f} "
          f"| {1000 * cpu_totp / args.rounds:.1f} |")
    print(f"| verify-totp request alone | {statistics.median(verify_ms):.1f} | {percentile(verify_ms, 0.9):.1f} | |")
    print(f"| added cost (per-round difference) | {statistics.median(differences):.1f} "
          f"| {percentile(differences, 0.9):.1f} | {1000 * (cpu_totp - cpu_plain) / args.rounds:.1f} |")


def callgrind_regions(rounds, plain, with_totp, sign_in, caller):
    """Each row in its own region for ``valgrind --tool=callgrind --collect-atstart=no
    --toggle-collect=dropwhile_next --toggle-collect=takewhile_next --toggle-collect=filterfalse_next``:
    ``rounds`` password sign-ins (dropwhile), first steps of TOTP sign-ins (takewhile), verify-totp
    requests (filterfalse). ``callgrind_annotate --inclusive=yes`` gives each region's instructions."""
    import itertools

    import pyotp

    cookies = []

    def first_step(i):
        status, body, cookie = caller.post("/sign-in/email", {"email": with_totp[i][0], "password": PASSWORD})
        assert status == 200 and body.get("twoFactorRedirect"), (status, body)
        cookies.append(cookie)
        return True

    def verify(i):
        code = pyotp.TOTP(with_totp[i][1]).now()
        status, body, _ = caller.post("/two-factor/verify-totp", {"code": code}, cookies[i])
        assert status == 200 and body.get("token"), (status, body)
        return False

    list(itertools.dropwhile(lambda i: sign_in(plain[i]) or True, range(rounds)))
    list(itertools.takewhile(first_step, range(rounds)))
    list(itertools.filterfalse(verify, range(rounds)))


if __name__ == "__main__":
    main()
