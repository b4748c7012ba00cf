"""The router reads a request's headers straight from the WSGI environ: the same as through Django's."""

import random

from django.test import RequestFactory

from authservice.api.context import Headers


def both(**environ):
    request = RequestFactory().get("/api/auth/get-session", **environ)
    return Headers.of_request(request).items(), Headers(request.headers).items()


def test_the_headers_are_djangos_headers():
    ours, djangos = both(HTTP_COOKIE="a=b", HTTP_USER_AGENT="ua", HTTP_X_FORWARDED_FOR="1.2.3.4, 5.6.7.8",
                         CONTENT_TYPE="application/json", CONTENT_LENGTH="0", HTTP_ORIGIN="https://x.example")
    assert ("x-forwarded-for", "1.2.3.4, 5.6.7.8") in ours
    assert ours == djangos


def test_a_header_named_twice_in_the_environ_is_named_once_as_django_names_it():
    # CONTENT_TYPE and HTTP_CONTENT_TYPE both name Content-Type: Django keeps the last, in the first's place.
    ours, djangos = both(CONTENT_TYPE="text/plain", HTTP_CONTENT_TYPE="application/json", HTTP_A="1")
    assert [value for name, value in ours if name == "content-type"] == ["application/json"]
    assert ours == djangos


def test_random_environs_give_djangos_headers():
    rng = random.Random(18)
    names = ["HTTP_", "CONTENT_TYPE", "CONTENT_LENGTH", "REMOTE_ADDR", "SERVER_NAME", "wsgi.x", "HTTP_X__Y",
             "HTTP_X_ß", "HTTP_İ", "HTTP_ǅ", "HTTP_A_B_C", "HTTP_COOKIE", "HTTP_CONTENT_TYPE", "http_lower"]
    for _ in range(300):
        environ = {rng.choice(names) + rng.choice(["", "X", "_Z", "ǆ"]): rng.choice(["", "v", "ü", "a, b"])
                   for _ in range(rng.randrange(0, 8))}
        ours, djangos = both(**environ)
        assert ours == djangos, environ
