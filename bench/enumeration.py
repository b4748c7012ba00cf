"""I7 benchmark: does an endpoint that mails take longer for a registered address than for an unknown one?

``python bench/enumeration.py`` (see bench/README.md, "Account enumeration by timing"):

1. starts a loopback SMTP server (aiosmtpd) that holds every conversation ``--smtp-delay`` seconds
   (50 ms: a remote relay's round trips; F7 measured 52 ms against 4 ms for forget-password);
2. recreates the database (``--database-url``, PostgreSQL by default; ``sqlite:///path`` works too),
   migrates it and seeds a signed-in prober, a registered unverified address and a taken one;
3. starts gunicorn (2 sync workers) with ``EMAIL_URL`` pointing at that server, the task backend
   ``--tasks`` (``database``: the production setting; ``immediate``: the mail is sent inside the
   request, as on 5cf316d) and the settings of bench/enumeration_settings.py, and, unless
   ``--no-worker``, ``manage.py db_worker`` beside it;
4. for each endpoint sends ``--samples`` pairs, a known and an unknown address in random order and
   the endpoints interleaved, each on a new connection as an attacker would, after a warm-up;
5. prints, per endpoint, the median time of each kind, their difference, and the median of the
   paired differences (I7: under 5 ms), and how many mails the SMTP server received once the worker
   drained the queue. Exits 1 when an endpoint misses the target.
"""

import argparse
import asyncio
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = "bench.enumeration_settings"
SECRET = "bench-secret-not-for-production-0123456789abcdef0123456789"
PASSWORD = "bench-password-123"
PROBER = "prober@bench.test"  # the attacker's own, signed-in account (change-email needs a session)
KNOWN = "known@bench.test"  # registered, unverified: every probe of it would mail someone
ENDPOINTS = ("sign-up", "forget-password", "request-password-reset", "change-email",
             "send-verification-email")
TARGET_MS = 5.0


# --- the loopback SMTP server --------------------------------------------------------------------
class SlowRelay:
    """An aiosmtpd handler that takes ``delay`` seconds over each message and logs its recipients."""

    def __init__(self, delay, log):
        self.delay = delay
        self.log = log

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's hook name
        await asyncio.sleep(self.delay)
        with open(self.log, "a") as log:
            log.writelines(f"{address}\n" for address in envelope.rcpt_tos)
        return "250 OK"


def serve_smtp(port, delay, log):
    """Run by the script itself: the SMTP server in its own process, so that its work never holds
    the measuring process's interpreter."""
    from aiosmtpd.controller import Controller  # noqa: PLC0415 - only this script needs it

    controller = Controller(SlowRelay(delay, log), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        while True:
            time.sleep(3600)
    finally:
        controller.stop()


def start_smtp(delay, logs):
    try:
        import aiosmtpd  # noqa: F401, PLC0415
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "aiosmtpd==1.4.6"], check=True,
                       timeout=300)
    port, received = free_port(), logs / "smtp-recipients.txt"
    received.write_text("")
    process = subprocess.Popen([sys.executable, __file__, "smtp", str(port), str(delay), str(received)],
                               stdout=open(logs / "smtp.log", "w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, port, received
        except OSError:
            time.sleep(0.1)
    sys.exit("the SMTP server did not start")


def received_count(received):
    return len(received.read_text().splitlines())


# --- processes -----------------------------------------------------------------------------------
def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def service_env(args, port, smtp_port):
    return {**os.environ, "DJANGO_SETTINGS_MODULE": SETTINGS, "PYTHONPATH": str(ROOT),
            "DATABASE_URL": args.database_url, "SECRET_KEY": SECRET, "DEBUG": "false",
            "AUTH_RATE_LIMIT": "false", "AUTH_BASE_URL": f"http://127.0.0.1:{port}",
            "EMAIL_URL": f"smtp://127.0.0.1:{smtp_port}", "AUTH_TASKS_BACKEND": args.tasks}


def fresh_database(args, env):
    url = args.database_url
    if url.startswith("sqlite:"):
        Path(urlsplit(url).path).unlink(missing_ok=True)
    else:
        subprocess.run([sys.executable, str(ROOT / "bench" / "fresh_db.py"), url], check=True, timeout=60)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env,
                   check=True, timeout=300)
    subprocess.run([sys.executable, __file__, "seed"], cwd=ROOT, env=env, check=True, timeout=120)


def seed():
    """Run by the script itself with the service's environment: the accounts the probes need."""
    import django  # noqa: PLC0415 - a separate process with its own settings

    django.setup()
    from django.contrib.auth import get_user_model  # noqa: PLC0415

    User = get_user_model()  # noqa: N806
    User.objects.create_user(email=PROBER, password=PASSWORD, name="Prober", email_verified=True)
    User.objects.create_user(email=KNOWN, password=PASSWORD, name="Known")


def start(command, env, log):
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def stop(process):
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until_up(port, server):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit("gunicorn exited; see its log")
        try:
            status, _, _ = request(port, "GET", "/api/auth/ok")
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit("gunicorn did not answer /api/auth/ok within 60 s")


# --- probes --------------------------------------------------------------------------------------
def request(port, method, path, body=None, cookie=None):
    """One request on a new connection: (status, parsed body, headers)."""
    headers = {"Origin": f"http://127.0.0.1:{port}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if cookie:
        headers["Cookie"] = cookie
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, json.loads(data or b"null"), response.getheaders()
    finally:
        connection.close()


def sign_in(port):
    status, body, headers = request(port, "POST", "/api/auth/sign-in/email",
                                    {"email": PROBER, "password": PASSWORD})
    if status != 200:
        sys.exit(f"the prober could not sign in: {status} {body}")
    cookies = [value.split(";", 1)[0] for name, value in headers if name.lower() == "set-cookie"]
    return "; ".join(cookies)


class Prober:
    def __init__(self, port, cookie):
        self.port = port
        self.cookie = cookie
        self.count = 0

    def fresh(self, endpoint):
        self.count += 1
        return f"nobody-{endpoint}-{self.count}-{random.randrange(10**9)}@bench.test"

    def ask(self, endpoint, address):
        """Send one probe; (seconds, status, body with the echoed address masked)."""
        path, body, cookie = {
            "sign-up": ("/sign-up/email", {"name": "Probe", "email": address, "password": PASSWORD}, None),
            "forget-password": ("/forget-password", {"email": address}, None),
            "request-password-reset": ("/request-password-reset", {"email": address}, None),
            "change-email": ("/change-email", {"newEmail": address}, self.cookie),
            "send-verification-email": ("/send-verification-email", {"email": address}, None),
        }[endpoint]
        started = time.perf_counter()
        status, answer, _ = request(self.port, "POST", "/api/auth" + path, body, cookie)
        elapsed = time.perf_counter() - started
        return elapsed, status, mask(answer)

    def pair(self, endpoint):
        """A known and an unknown probe in random order: {"known": seconds, "unknown": seconds}."""
        kinds = ["known", "unknown"]
        random.shuffle(kinds)
        times, answers = {}, {}
        for kind in kinds:
            address = KNOWN if kind == "known" else self.fresh(endpoint)
            times[kind], status, answer = self.ask(endpoint, address)
            answers[kind] = (status, answer)
        if answers["known"] != answers["unknown"] or answers["known"][0] != 200:
            sys.exit(f"{endpoint}: the answers differ or fail: {answers}")
        return times


def mask(body):
    """What a sign-up answer echoes or makes fresh (address, id, times) does not count as a difference."""
    if isinstance(body, dict) and isinstance(body.get("user"), dict):
        return {**body, "user": {**body["user"], "email": "…", "id": "…", "createdAt": "…",
                                 "updatedAt": "…"}}
    return body


def measure(prober, endpoints, samples, warmup):
    for _ in range(warmup):
        for endpoint in endpoints:
            prober.pair(endpoint)
    times = {endpoint: {"known": [], "unknown": []} for endpoint in endpoints}
    for _ in range(samples):
        order = list(endpoints)
        random.shuffle(order)
        for endpoint in order:
            for kind, seconds in prober.pair(endpoint).items():
                times[endpoint][kind].append(seconds * 1000)
    return times


def wait_for_mail(received, expected, seconds):
    deadline = time.monotonic() + seconds
    while received_count(received) < expected and time.monotonic() < deadline:
        time.sleep(0.5)
    return received_count(received)


def report(args, times, delivered, expected, load):
    """The table; I7 holds for an endpoint when the median of the paired differences is under 5 ms.

    Each pair is a known and an unknown probe sent back to back, so their difference cancels what
    drifts over the run (other load on the machine); the difference of the two medians is shown too.
    """
    worker = "n/a" if args.tasks == "immediate" else "no" if args.no_worker else "yes"
    print(f"\ntasks={args.tasks} worker={worker} samples={args.samples} "
          f"smtp-delay={args.smtp_delay * 1000:.0f} ms database={urlsplit(args.database_url).scheme} "
          f"load average {load[0]:.1f} before, {load[1]:.1f} after")
    print("| endpoint | known p50 ms | unknown p50 ms | p50 difference ms | paired difference p50 ms "
          "| known slower in | I7 (< 5 ms) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    verdict = True
    for endpoint, kinds in times.items():
        known, unknown = statistics.median(kinds["known"]), statistics.median(kinds["unknown"])
        paired = [k - u for k, u in zip(kinds["known"], kinds["unknown"], strict=True)]
        slower = sum(difference > 0 for difference in paired)
        ok = abs(statistics.median(paired)) < TARGET_MS
        verdict &= ok
        print(f"| {endpoint} | {known:.1f} | {unknown:.1f} | {known - unknown:+.1f} | "
              f"{statistics.median(paired):+.1f} | {slower}/{len(paired)} pairs | {'yes' if ok else 'NO'} |")
    print(f"mails received by the SMTP server: {delivered} of {expected} expected")
    return verdict


def misdirected(received, endpoints, pairs):
    """How many mails went where no account wanted them: to a probed unknown address of the reset
    and verification probes, or to the taken address by sign-up and change-email (which probe it
    too, so the registered address must get exactly one mail per pair of the other three)."""
    addresses = received.read_text().splitlines()
    fresh = [a for a in addresses if a != KNOWN]
    wanted_fresh = ("nobody-sign-up-", "nobody-change-email-")
    to_known = sum(e not in ("sign-up", "change-email") for e in endpoints) * pairs
    return sum(not a.startswith(wanted_fresh) for a in fresh) + abs(len(addresses) - len(fresh) - to_known)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--tasks", choices=("database", "immediate"), default="database")
    parser.add_argument("--no-worker", action="store_true", help="run no db_worker: mail stays queued")
    parser.add_argument("--smtp-delay", type=float, default=0.05, help="seconds per SMTP conversation")
    parser.add_argument("--database-url",
                        default="postgres://postgres@127.0.0.1:5432/authservice_bench_mail")
    parser.add_argument("--endpoints", nargs="+", choices=ENDPOINTS, default=list(ENDPOINTS))
    parser.add_argument("--workers", type=int, default=2, help="gunicorn sync workers")
    args = parser.parse_args()

    logs = Path(os.environ.get("TMPDIR", "/tmp")) / f"authservice-enumeration-{os.getpid()}"
    logs.mkdir(parents=True, exist_ok=True)
    smtp, smtp_port, received = start_smtp(args.smtp_delay, logs)
    port = free_port()
    env = service_env(args, port, smtp_port)
    server = worker = None
    try:
        fresh_database(args, env)
        server = start([sys.executable, "-m", "gunicorn", "project.wsgi:application", "-w", str(args.workers),
                        "-b", f"127.0.0.1:{port}", "--timeout", "120"], env,
                       open(logs / "gunicorn.log", "w"))
        if args.tasks == "database" and not args.no_worker:
            worker = start([sys.executable, "manage.py", "db_worker", "--no-reload", "--interval", "0.2",
                            "--no-startup-delay"], env, open(logs / "worker.log", "w"))
        wait_until_up(port, server)
        prober = Prober(port, sign_in(port))
        load_before = os.getloadavg()[0]
        times = measure(prober, args.endpoints, args.samples, args.warmup)
        load = (load_before, os.getloadavg()[0])
        # One mail per pair: to the known address for the reset and verification probes, to the
        # fresh one for sign-up (a new account) and change-email (a free new address).
        expected = len(args.endpoints) * (args.samples + args.warmup)
        delivered = (wait_for_mail(received, expected, 120)
                     if args.tasks == "immediate" or not args.no_worker else received_count(received))
        ok = report(args, times, delivered, expected, load)
        if args.tasks == "immediate" or not args.no_worker:
            wrong = misdirected(received, args.endpoints, args.samples + args.warmup)
            print(f"mails to an address that should get none: {wrong}")
            ok &= not wrong
    finally:
        stop(worker)
        stop(server)
        stop(smtp)
    print(f"logs: {logs}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["seed"]:
        seed()
    elif sys.argv[1:2] == ["smtp"]:
        serve_smtp(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])
    else:
        main()
