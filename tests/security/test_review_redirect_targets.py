"""I4: no open redirect through callbackURL / redirectTo / errorCallbackURL / newUserCallbackURL.

The attacker tries the classic parser confusions against an exact origin, a scheme glob
(``https://*.corp.example.com``), a host glob (``*.glob.example``) and the base URL: userinfo
(``trusted@evil``), backslashes, encoded ``@``/``/``/``\\``, fragments and queries hiding the trusted
name, trailing-dot and lookalike (IDN/Cyrillic) hosts, other ports, ``javascript:`` behind a glob,
protocol-relative and scheme-relative paths, tab/newline tricks, in POST bodies (router-wide check)
and in the GET links of mails (verify-email, reset-password/:token, delete-user/callback), where the
check runs in the endpoint. Every one must be refused (403, or 400 when it does not parse), never
followed.
"""

import pytest

from authservice import origins

pytestmark = pytest.mark.django_db

TRUSTED = ["https://app.example.com", "https://*.corp.example.com", "*.glob.example", "http://localhost:3000"]

HOSTILE = [
    "https://app.example.com@evil.com/", "https://evil.com#@app.example.com", "https://evil.com?@app.example.com/",
    "https://evil.com\\@app.example.com/", "https://app.example.com.evil.com/", "https://evil.com/.app.example.com",
    "https://app.example.com:444/x", "https://app.example.com./x", "https://\u0430pp.example.com/",
    "https://evil.com/x.corp.example.com", "https://evil.com?.corp.example.com", "https://evil.com#.corp.example.com",
    "https://x.corp.example.com@evil.com/", "https://x.corp.example.com:8443/", "https://evil.com\\.corp.example.com/",
    "http://x.corp.example.com/", "https://evil.com/?.glob.example", "javascript://x.glob.example/%0aalert(1)",
    "http://localhost:3000@evil.com", "http://localhost:3000.evil.com", "/\\evil.com", "//evil.com",
    "/%2fevil.com", "/%5cevil.com", "///evil.com", "https:evil.com", "https:/evil.com", "https:\\\\evil.com",
    "https://auth.example.com\\@evil.com", "http://127.0.0.1:8000@evil.com", "/\t/evil.com", "/\n/evil.com",
    "java\tscript:alert(1)", "javascript:alert(1)", "data:text/html,x", "http://[::1", "http://a:99999/",
    "\u0000", " //evil.com", "https://evil.com%00.auth.example.com/",
]


@pytest.fixture(autouse=True)
def trusted(configure):
    configure(trusted_origins=TRUSTED)
    origins.reset()
    yield
    origins.reset()


@pytest.mark.parametrize("url", HOSTILE)
def test_post_url_fields_refuse_hostile_targets(api, url):
    response = api.api_post("/request-password-reset", {"email": "a@example.com", "redirectTo": url})
    assert response.status_code in (400, 403), (url, response.content)
    response = api.api_post("/send-verification-email", {"email": "a@example.com", "callbackURL": url})
    assert response.status_code in (400, 403), (url, response.content)


@pytest.mark.parametrize("url", HOSTILE)
@pytest.mark.parametrize("path", ["/verify-email", "/reset-password/abcdefghijklmnopqrstuvwx", "/delete-user/callback"])
def test_get_links_refuse_hostile_targets(signed_in, url, path):
    response = signed_in.api_get(path, {"token": "x", "callbackURL": url})
    assert response.status_code in (400, 403), (url, response.status_code, response.get("Location"))
    assert "Location" not in response


@pytest.mark.parametrize("url", ["https://app.example.com/x", "https://a.corp.example.com/cb", "/dashboard"])
def test_trusted_targets_still_pass(api, url):
    response = api.api_post("/request-password-reset", {"email": "a@example.com", "redirectTo": url})
    assert response.status_code == 200
