"""One request of each benchmarked kind, checked, before wrk runs: a fast error must not pass for speed.

``check.py BASE_URL COOKIES_FILE EMAILS_FILE PASSWORD UNIQUE`` exits non-zero, saying why, when
get-session does not return the seeded session, sign-in does not return a token, or sign-up fails.
"""

import json
import sys
import urllib.error
import urllib.request


def call(method, url, body=None, cookie=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if cookie:
        headers["Cookie"] = cookie
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def main():
    base, cookies, emails, password, unique = sys.argv[1:6]
    cookie = open(cookies).readline().strip()
    email = open(emails).readline().strip()
    api = base.rstrip("/") + "/api/auth"
    checks = [
        ("get-session", call("GET", api + "/get-session", cookie=cookie),
         lambda body: isinstance(body, dict) and body.get("session", {}).get("token")),
        ("sign-in", call("POST", api + "/sign-in/email", {"email": email, "password": password}),
         lambda body: isinstance(body, dict) and body.get("token")),
        ("sign-up", call("POST", api + "/sign-up/email",
                         {"name": "Check", "email": f"check-{unique}@example.com", "password": password}),
         lambda body: isinstance(body, dict) and body.get("token")),
    ]
    failed = False
    for name, (status, body), ok in checks:
        if status != 200 or not ok(body):
            print(f"check failed: {name} -> {status} {str(body)[:300]}", file=sys.stderr)
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
