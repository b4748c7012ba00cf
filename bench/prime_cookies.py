"""Give every seeded session its cookie cache, as a browser would have it after one get-session.

``prime_cookies.py BASE_URL COOKIES_IN COOKIES_OUT``: for each ``Cookie`` line of COOKIES_IN (the signed
session token, from seed.py or reference/seed.mjs), one GET /api/auth/get-session; the server reads the
database and sets ``auth.session_data`` (its chunks too, if any). Each line of COOKIES_OUT is the token
cookie followed by those cookies. Exits non-zero, saying why, when a session gets no cache cookie: the
cache-on runs would then measure the database path.

The cache expires after max_age (300 s by default), so compare.sh primes right before each run.
"""

import http.client
import sys
from urllib.parse import urlsplit


def main():
    base, source, target = sys.argv[1:4]
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    lines = []
    for line in open(source):
        cookie = line.strip()
        if not cookie:
            continue
        connection.request("GET", "/api/auth/get-session", headers={"Cookie": cookie})
        response = connection.getresponse()
        response.read()
        cached = []
        for name, value in response.getheaders():
            if name.lower() != "set-cookie":
                continue
            pair = value.split(";", 1)[0].strip()
            key, _, content = pair.partition("=")
            if ".session_data" in key and content:
                cached.append(pair)
        if response.status != 200 or not cached:
            sys.exit(f"prime_cookies: {base} set no session_data for {cookie[:40]}... ({response.status})")
        lines.append("; ".join([cookie, *cached]))
    with open(target, "w") as handle:
        handle.write("".join(f"{line}\n" for line in lines))


if __name__ == "__main__":
    main()
