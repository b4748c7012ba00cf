"""The real OpenID provider of the tests: tests/js/oidc_provider.mjs (npm oidc-provider) in a Node
process on a free loopback port, and a browser (requests.Session) that logs in there."""

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import requests

JS_DIR = Path(__file__).resolve().parent.parent / "js"
SCRIPT = JS_DIR / "oidc_provider.mjs"


def available():
    return shutil.which("node") is not None and (JS_DIR / "node_modules" / "oidc-provider").is_dir()


class OpenIDProvider:
    """One running oidc-provider; ``issuer`` is its origin."""

    def __init__(self, clients):
        env = {**os.environ, "OP_PORT": "0", "OP_CLIENTS": json.dumps(clients)}
        self.process = subprocess.Popen(["node", str(SCRIPT)], cwd=JS_DIR, env=env, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        ready = {}

        def read():
            for line in self.process.stdout:
                if line.startswith("READY "):
                    ready["port"] = int(line.split()[1])
                    break
            for _ in self.process.stdout:  # keep draining so the pipe never blocks the OP
                pass

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        for _ in range(300):
            if "port" in ready or self.process.poll() is not None:
                break
            reader.join(0.05)
        if "port" not in ready:
            self.stop()
            raise RuntimeError("oidc-provider did not start")
        self.issuer = f"http://127.0.0.1:{ready['port']}"

    def add_account(self, sub, **claims):
        requests.post(f"{self.issuer}/__test/accounts", json={sub: claims}, timeout=5).raise_for_status()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()


def login(browser, authorize_url, account_id, return_to, abort=False):
    """Follow the OP's redirects as a browser, logging in as ``account_id`` on its login form.

    Returns the URL the OP finally sends the browser to under ``return_to`` (our callback), without
    requesting it. ``abort=True`` cancels at the login form instead (the user says no).
    """
    url = authorize_url
    for _ in range(12):
        if url.startswith(return_to):
            return url
        response = browser.get(url, allow_redirects=False, timeout=10)
        if response.status_code in (302, 303):
            url = urljoin(url, response.headers["Location"])
            continue
        if response.status_code == 200 and "/interaction/" in urlsplit(url).path:
            if abort:
                response = browser.get(url.rstrip("/") + "/abort", allow_redirects=False, timeout=10)
            else:
                response = browser.post(url, data={"prompt": "login", "login": account_id, "password": "x"},
                                        allow_redirects=False, timeout=10)
            url = urljoin(url, response.headers["Location"])
            continue
        raise AssertionError(f"unexpected answer {response.status_code} at {url}: {response.text[:300]}")
    raise AssertionError("too many redirects at the OP")


def query_of(url):
    return {key: values[-1] for key, values in parse_qs(urlsplit(url).query).items()}
