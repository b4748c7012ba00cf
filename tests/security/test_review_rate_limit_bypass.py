"""Rate limiter bypasses (brute force of sign-in, mail bombing through reset).

The attacker rotates ``X-Forwarded-For`` (no proxy header is configured, so it must be ignored) and
rewrites the path so that it reaches the same endpoint under another counter key: double and
trailing slashes, dot segments, case, ``%2F``, ``;params``, ``%00``, query strings and fragments.
Each variant either is a 404 or shares the strict sign-in counter (3 per 10 s): the 4th attempt of
six must never reach the password check. The reset mail endpoint and its pre-1.4 alias keep their
own strict counters (3 per minute each).
"""

import pytest

from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

VARIANTS = ["/sign-in/email", "//sign-in/email", "/sign-in/email/", "/Sign-in/email", "/sign-in%2Femail",
            "/sign-in/./email", "/./sign-in/email", "/sign-in//email", "/sign-in/email;x", "/sign-in/email%00",
            "/sign-in/email?x=1", "/SIGN-IN/EMAIL"]


@pytest.fixture(autouse=True)
def limited(configure):
    configure(rate_limit={"enabled": True})


@pytest.mark.parametrize("path", VARIANTS)
def test_path_variants_and_spoofed_forwarded_for_do_not_reset_the_counter(user, path):
    client = ApiClient()
    codes = []
    for attempt in range(6):
        response = client.generic(
            "POST", "/api/auth" + path, '{"email":"ada@example.com","password":"wrong password"}',
            content_type="application/json", HTTP_ORIGIN="http://127.0.0.1:8000",
            HTTP_X_FORWARDED_FOR=f"10.0.0.{attempt}", HTTP_X_REAL_IP=f"10.0.1.{attempt}")
        codes.append(response.status_code)
    assert codes.count(401) <= 3, codes
    assert all(code in (401, 404, 429) for code in codes), codes


@pytest.mark.parametrize("path", ["/request-password-reset", "/forget-password"])
def test_reset_mail_is_limited_per_client(user, path):
    client = ApiClient()
    codes = [client.api_post(path, {"email": "ada@example.com"}, HTTP_X_FORWARDED_FOR=f"10.9.9.{i}").status_code
             for i in range(5)]
    assert codes == [200, 200, 200, 429, 429]
