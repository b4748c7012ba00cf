"""Session cookies: names, signed values, attributes, "don't remember", deletion (core.md §2)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from authservice.models import Session
from tests.conftest import BASE, PASSWORD, ApiClient, error_of

VECTOR_SECRET = "x" * 40
VECTOR_TOKEN = "1xBpV1WVL7In8UTTbxqhjQWZPxPe0co2"
VECTOR_VALUE = "1xBpV1WVL7In8UTTbxqhjQWZPxPe0co2.JWTTyuSVFMvnYAyPG3fHS42Tl0S%2Fu5hqSOGHOCWiaUY%3D"


# --- helpers shared by the other test modules --------------------------------------------------
def set_cookie_lines(response):
    """Every ``Set-Cookie`` header value exactly as it goes over the wire."""
    return [morsel.OutputString() for morsel in response.cookies.values()]


def parse_set_cookie(line):
    """``name=value; A=b; Flag`` -> (name, value, {attribute lower-case: value or True})."""
    first, *rest = [part.strip() for part in line.split(";")]
    name, _, value = first.partition("=")
    attrs = {}
    for part in rest:
        key, eq, val = part.partition("=")
        attrs[key.lower()] = val if eq else True
    return name, value, attrs


def set_cookies(response):
    """``{name: (value, attrs)}`` of a Django response or of in-process ``set-cookie`` lines."""
    lines = response if isinstance(response, list) else set_cookie_lines(response)
    found = {}
    for line in lines:
        name, value, attrs = parse_set_cookie(line)
        found[name] = (value, attrs)
    return found


def sign_in(api, email="ada@example.com", **body):
    return api.api_post("/sign-in/email", {"email": email, "password": PASSWORD, **body})


def make_session(user, token=None, age=0, expires_in=604800, **fields):
    """A session row whose creation lies ``age`` seconds in the past."""
    from authservice import tokens

    created = timezone.now() - timedelta(seconds=age)
    return Session.objects.create(
        token=token or tokens.session_token(), user=user, created_at=created, updated_at=created,
        expires_at=created + timedelta(seconds=expires_in), **fields,
    )


# --- the value ---------------------------------------------------------------------------------
def test_signed_value_matches_the_better_auth_test_vector(configure):
    from authservice.cookies import signed_value

    configure(secret=VECTOR_SECRET)
    assert signed_value(VECTOR_TOKEN) == VECTOR_VALUE


def test_a_cookie_carrying_the_test_vector_value_opens_its_session(configure, api, user):
    configure(secret=VECTOR_SECRET)
    make_session(user, token=VECTOR_TOKEN)
    api.cookies["auth.session_token"] = VECTOR_VALUE
    response = api.api_get("/get-session")
    assert response.status_code == 200
    assert response.json()["session"]["token"] == VECTOR_TOKEN


def test_a_refreshed_session_re_sends_exactly_the_test_vector_cookie(configure, api, user):
    configure(secret=VECTOR_SECRET)
    # Created two days ago: past updateAge, so the next read extends it and re-sends the cookie.
    make_session(user, token=VECTOR_TOKEN, age=2 * 86400)
    api.cookies["auth.session_token"] = VECTOR_VALUE
    response = api.api_get("/get-session")
    assert response.status_code == 200
    lines = set_cookie_lines(response)
    assert lines, "the refresh must re-send the session cookie"
    name, value, attrs = parse_set_cookie(lines[0])
    assert (name, value) == ("auth.session_token", VECTOR_VALUE)
    assert attrs == {"max-age": "604800", "path": "/", "httponly": True, "samesite": "Lax"}


def test_sign_in_cookie_carries_the_token_of_the_answer(api, user):
    from authservice.cookies import signed_value

    response = sign_in(api)
    value, _ = set_cookies(response)["auth.session_token"]
    assert value == signed_value(response.json()["token"])
    assert value.endswith("%3D")


def test_the_signature_is_44_base64_characters_with_padding(api, user):
    from urllib.parse import unquote

    value, _ = set_cookies(sign_in(api))["auth.session_token"]
    token, _, signature = unquote(value).rpartition(".")
    assert len(token) == 32 and token.isalnum()
    assert len(signature) == 44 and signature.endswith("=")


# --- attributes --------------------------------------------------------------------------------
def test_session_cookie_attributes_over_http(api, user):
    cookies = set_cookies(sign_in(api))
    assert list(cookies) == ["auth.session_token"]
    _, attrs = cookies["auth.session_token"]
    assert attrs == {"max-age": "604800", "path": "/", "httponly": True, "samesite": "Lax"}


def test_https_base_url_gives_secure_prefixed_cookies(configure, user):
    configure(base_url="https://auth.example.com")
    api = ApiClient(origin="https://auth.example.com")
    cookies = set_cookies(sign_in(api))
    assert list(cookies) == ["__Secure-auth.session_token"]
    _, attrs = cookies["__Secure-auth.session_token"]
    assert attrs == {"max-age": "604800", "path": "/", "httponly": True, "samesite": "Lax",
                     "secure": True}


def test_secure_prefixed_cookie_is_read_back_over_https(configure, user):
    configure(base_url="https://auth.example.com")
    api = ApiClient(origin="https://auth.example.com")
    token = sign_in(api).json()["token"]
    body = api.api_get("/get-session").json()
    assert body["session"]["token"] == token


def test_an_http_named_cookie_is_ignored_when_cookies_are_secure(configure, user):
    from authservice.cookies import signed_value

    configure(base_url="https://auth.example.com")
    session = make_session(user)
    api = ApiClient(origin="https://auth.example.com")
    api.cookies["auth.session_token"] = signed_value(session.token)
    assert api.api_get("/get-session").content == b"null"


def test_secure_cookies_setting_wins_over_the_base_url(configure, api, user):
    configure(secure_cookies=True)
    assert "__Secure-auth.session_token" in set_cookies(sign_in(api))


def test_cookie_prefix_and_per_cookie_names_are_settings(configure, api, user):
    configure(cookie_prefix="myapp", cookie_names={"dont_remember": "keep.me"})
    cookies = set_cookies(sign_in(api, rememberMe=False))
    assert set(cookies) == {"myapp.session_token", "keep.me"}


def test_cookie_domain_setting_adds_a_domain_attribute(configure, api, user):
    configure(cookie_domain=".example.com")
    _, attrs = set_cookies(sign_in(api))["auth.session_token"]
    assert attrs["domain"] == ".example.com"


# --- "don't remember" --------------------------------------------------------------------------
def test_remember_me_false_sends_a_browser_session_cookie_and_dont_remember(api, user):
    from authservice.cookies import signed_value

    cookies = set_cookies(sign_in(api, rememberMe=False))
    assert set(cookies) == {"auth.session_token", "auth.dont_remember"}
    for _, attrs in cookies.values():
        assert attrs == {"path": "/", "httponly": True, "samesite": "Lax"}
    assert cookies["auth.dont_remember"][0] == signed_value("true")
    assert cookies["auth.dont_remember"][0].startswith("true.")


def test_remember_me_false_session_lives_one_day(api, user):
    token = sign_in(api, rememberMe=False).json()["token"]
    session = Session.objects.get(token=token)
    lifetime = (session.expires_at - session.created_at).total_seconds()
    assert lifetime == pytest.approx(86400, abs=2)


def test_remember_me_true_session_lives_seven_days(api, user):
    token = sign_in(api, rememberMe=True).json()["token"]
    session = Session.objects.get(token=token)
    assert (session.expires_at - session.created_at).total_seconds() == pytest.approx(604800, abs=2)


def test_dont_remember_is_the_same_value_for_every_user(make_user):
    first, second = ApiClient(), ApiClient()
    make_user(email="a@example.com")
    make_user(email="b@example.com")
    one = set_cookies(sign_in(first, "a@example.com", rememberMe=False))["auth.dont_remember"][0]
    two = set_cookies(sign_in(second, "b@example.com", rememberMe=False))["auth.dont_remember"][0]
    assert one == two


def test_dont_remember_session_is_never_refreshed(api, user):
    token = sign_in(api, rememberMe=False).json()["token"]
    stale = timezone.now() + timedelta(hours=1)
    Session.objects.filter(token=token).update(expires_at=stale)
    response = api.api_get("/get-session")
    assert response.json()["session"]["token"] == token
    assert set_cookie_lines(response) == []
    assert Session.objects.get(token=token).expires_at == stale


# --- deletion ----------------------------------------------------------------------------------
def test_sign_out_sends_three_deletion_cookies(signed_in):
    response = signed_in.api_post("/sign-out")
    assert response.status_code == 200
    lines = sorted(set_cookie_lines(response))
    assert len(lines) == 3
    for line in lines:
        name, value, attrs = parse_set_cookie(line)
        assert value == ""
        assert attrs == {"max-age": "0", "path": "/", "httponly": True, "samesite": "Lax"}
    assert {parse_set_cookie(line)[0] for line in lines} == {
        "auth.session_token", "auth.session_data", "auth.dont_remember"}


def test_deletion_cookie_is_written_exactly_as_better_auth_does(signed_in):
    lines = set_cookie_lines(signed_in.api_post("/sign-out"))
    line = next(line for line in lines if line.startswith("auth.session_token="))
    name, value, attrs = parse_set_cookie(line)
    assert line.startswith("auth.session_token=;")
    assert "=" not in line.split(";")[0][len("auth.session_token="):]
    assert attrs == {"max-age": "0", "path": "/", "httponly": True, "samesite": "Lax"}


def test_deletion_cookies_are_secure_and_prefixed_over_https(configure, user):
    configure(base_url="https://auth.example.com")
    api = ApiClient(origin="https://auth.example.com")
    sign_in(api)
    cookies = set_cookies(api.api_post("/sign-out"))
    assert set(cookies) == {"__Secure-auth.session_token", "__Secure-auth.session_data",
                            "__Secure-auth.dont_remember"}
    for value, attrs in cookies.values():
        assert value == "" and attrs["secure"] is True and attrs["max-age"] == "0"


# --- bad cookies -------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [
    "garbage",
    "no-dot-at-all",
    "abc.def",
    "{token}",  # unsigned
    "{token}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",  # forged signature
    "{token}.{sig}x",  # tampered signature
    "x{token}.{sig}",  # tampered token
    "%%%",
])
def test_a_bad_session_cookie_means_no_session_and_no_cookie_change(api, user, value):
    from urllib.parse import unquote

    from authservice.cookies import signed_value

    session = make_session(user)
    good = unquote(signed_value(session.token))
    sig = good.rpartition(".")[2]
    api.cookies["auth.session_token"] = value.format(token=session.token, sig=sig)
    response = api.api_get("/get-session")
    assert response.status_code == 200
    assert response.content == b"null"
    assert set_cookie_lines(response) == []
    assert Session.objects.filter(pk=session.pk).exists()


def test_a_cookie_signed_with_another_secret_is_ignored(configure, api, user):
    from authservice.cookies import signed_value

    session = make_session(user)
    configure(secret="another-secret-" + "y" * 30)
    forged = signed_value(session.token)
    configure(secret=None)
    api.cookies["auth.session_token"] = forged
    assert api.api_get("/get-session").content == b"null"


def test_a_bad_cookie_on_a_guarded_endpoint_is_a_plain_401(api, user):
    api.cookies["auth.session_token"] = "garbage"
    response = api.api_get("/list-sessions")
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHORIZED"
    assert set_cookie_lines(response) == []


def test_a_validly_signed_cookie_of_a_gone_session_gets_401_and_cleared_cookies(signed_in):
    Session.objects.all().delete()
    response = signed_in.api_get("/list-sessions")
    assert response.status_code == 401
    cookies = set_cookies(response)
    assert cookies["auth.session_token"] == ("", {"max-age": "0", "path": "/", "httponly": True,
                                                  "samesite": "Lax"})


def test_the_base_path_does_not_limit_the_cookie_path(api, user):
    response = api.post(BASE + "/sign-in/email", {"email": user.email, "password": PASSWORD},
                        content_type="application/json", HTTP_ORIGIN="http://127.0.0.1:8000")
    assert set_cookies(response)["auth.session_token"][1]["path"] == "/"
