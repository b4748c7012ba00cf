"""One request of each benchmarked kind, checked, before wrk runs: a fast error must not pass for speed.

``check.py BASE_URL COOKIES_FILE EMAILS_FILE PASSWORD UNIQUE`` exits non-zero, saying why, when
get-session does not return the seeded session, sign-in does not return a token, or sign-up fails.

``check.py get-session|me BASE_URL COOKIES_FILE EMAILS_FILE`` checks that one endpoint alone: get-session,
or the example project's ``/me/`` (the middleware path), must answer the first seeded cookie with the
first seeded user's e-mail (seed.py gives session i to user i mod the number of users).

``check.py saml BASE_URL CHECK_FILE`` posts the SAMLResponse form in CHECK_FILE (saml_pool.py) to the
ACS and exits non-zero unless the answer is a 302 to the callback URL whose last Set-Cookie header is
a session cookie (saml_acs.lua sees only the last one) and that session is signed in.
"""

import http.client
import json
import sys
import urllib.error
import urllib.request
from urllib.parse import urlsplit


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


def check_saml(base, check_file):
    body, _, relay_cookie = open(check_file).readline().strip().partition("\t")  # saml_pool.py's line
    target = urlsplit(base)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
    connection.request("POST", "/api/auth/sso/saml2/callback/bench-saml", body,
                       {"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://idp.bench.test",
                        "Cookie": relay_cookie})
    response = connection.getresponse()
    response.read()
    location = response.getheader("Location") or ""
    set_cookies = [value for name, value in response.getheaders() if name.lower() == "set-cookie"]
    last = set_cookies[-1] if set_cookies else ""
    problem = None
    if response.status != 302 or "error=" in location:
        problem = f"{response.status} Location: {location}"
    elif "session_token=" not in last or last.split("=", 1)[1].startswith(";"):
        problem = f"the last Set-Cookie is not the session cookie: {set_cookies}"
    else:
        cookie = last.split(";", 1)[0]
        status, session = call("GET", base.rstrip("/") + "/api/auth/get-session", cookie=cookie)
        if status != 200 or not (isinstance(session, dict) and (session.get("user") or {}).get("email")):
            problem = f"the SAML session is not signed in: get-session -> {status} {str(session)[:300]}"
    if problem:
        print(f"check failed: saml-acs -> {problem}", file=sys.stderr)
        sys.exit(1)


def check_signed_in(endpoint, base, cookies, emails):
    cookie = open(cookies).readline().strip()
    email = open(emails).readline().strip()
    if endpoint == "me":
        status, body = call("GET", base.rstrip("/") + "/me/", cookie=cookie)
        found = body.get("email") if isinstance(body, dict) else None
    else:
        status, body = call("GET", base.rstrip("/") + "/api/auth/get-session", cookie=cookie)
        found = (body.get("user") or {}).get("email") if isinstance(body, dict) else None
    if status != 200 or found != email:
        print(f"check failed: {endpoint} -> {status} {str(body)[:300]} (expected {email})", file=sys.stderr)
        sys.exit(1)


def main():
    if sys.argv[1] == "saml":
        check_saml(sys.argv[2], sys.argv[3])
        return
    if sys.argv[1] in ("get-session", "me"):
        check_signed_in(*sys.argv[1:5])
        return
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
