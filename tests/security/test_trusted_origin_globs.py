"""I4: a trusted-origin glob matches http(s) only, and a URL that does not parse is a 400, never a 500.

The attack (issue 12, F8): with ``AUTH_TRUSTED_ORIGINS=*.example.com`` (a host-only glob), the host of
``javascript://app.example.com/%0aalert(1)`` matched, so it was accepted as a callbackURL and handed
back for the client to navigate to: the ``//`` starts a JavaScript comment, ``%0a`` ends it. And
``http://[bad`` raised inside ``urlsplit`` when a glob was configured: a 500. Every URL is now parsed
once in ``authservice/origins.py``, so every caller (router-wide URL fields, the Origin check, SSO
sign-in) gets the same answer.
"""

import pytest

from authservice.models import Session
from tests.conftest import PASSWORD, error_of

JAVASCRIPT = "javascript://app.example.com/%0aalert(document.domain)"
MALFORMED = ["http://[bad", "https://app.example.com:99999/", "https://app.example.com:x/", "http://[::1/"]


@pytest.fixture
def host_glob(configure):
    configure(trusted_origins=["*.example.com"])


@pytest.fixture
def origin_glob(configure):
    configure(trusted_origins=["https://*.example.com"])


def _sign_in(api, **body):
    return api.api_post("/sign-in/email", {"email": "ada@example.com", "password": PASSWORD, **body})


@pytest.mark.parametrize("url", [JAVASCRIPT, "JavaScript://app.example.com/%0aalert(1)",
                                 "data://app.example.com/,x", "vbscript://app.example.com/%0amsgbox(1)",
                                 "ftp://app.example.com/x", "file://app.example.com/etc/passwd"])
def test_a_host_glob_does_not_trust_other_schemes(host_glob, api, user, url):
    response = _sign_in(api, callbackURL=url)
    assert response.status_code == 403, response.content
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"
    assert not Session.objects.exists()


@pytest.mark.parametrize("field,code", [("errorCallbackURL", "INVALID_ERROR_CALLBACK_URL"),
                                        ("newUserCallbackURL", "INVALID_NEW_USER_CALLBACK_URL")])
def test_sso_sign_in_refuses_the_javascript_url_in_every_url_field(host_glob, api, db, field, code):
    response = api.api_post("/sign-in/sso", {"callbackURL": "/ok", field: JAVASCRIPT, "providerId": "any"})
    assert response.status_code == 403, response.content
    assert error_of(response)["code"] == code


def test_an_origin_header_with_another_scheme_is_not_trusted_by_a_host_glob(host_glob, signed_in):
    response = signed_in.api_post("/revoke-other-sessions", HTTP_ORIGIN="javascript://app.example.com")
    assert response.status_code == 403
    assert error_of(response)["code"] == "INVALID_ORIGIN"


def test_an_active_scheme_is_never_trusted_even_when_listed(configure, api, user):
    configure(trusted_origins=["javascript://", "data://"])
    for url in ("javascript://x/%0aalert(1)", "data://x/,y"):
        assert error_of(_sign_in(api, callbackURL=url))["code"] == "INVALID_CALLBACK_URL", url


@pytest.mark.parametrize("url", MALFORMED)
@pytest.mark.parametrize("globs", ["host_glob", "origin_glob"])
def test_a_callback_url_that_does_not_parse_is_a_400_with_a_code(request, api, user, globs, url):
    request.getfixturevalue(globs)
    response = _sign_in(api, callbackURL=url)
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert not Session.objects.exists()


@pytest.mark.parametrize("url", MALFORMED)
def test_an_origin_header_that_does_not_parse_is_an_untrusted_origin(host_glob, signed_in, url):
    """A header rather than a field: refused as any untrusted origin is (403), never a 500."""
    response = signed_in.api_post("/revoke-other-sessions", HTTP_ORIGIN=url)
    assert response.status_code == 403, response.content
    assert error_of(response)["code"] == "INVALID_ORIGIN"


@pytest.mark.parametrize("url", MALFORMED)
def test_a_get_callback_url_that_does_not_parse_is_a_400_with_a_code(host_glob, api, db, url):
    response = api.api_get("/verify-email", {"token": "x", "callbackURL": url})
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("url", MALFORMED)
def test_an_sso_callback_url_that_does_not_parse_is_a_400_with_a_code(host_glob, api, db, url):
    response = api.api_post("/sign-in/sso", {"callbackURL": url, "providerId": "any"})
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "VALIDATION_ERROR"
