"""POST /sign-out (core.md §4.5)."""

from authservice.models import Session
from tests.conftest import ApiClient, error_of
from tests.test_cookies import set_cookies


def test_sign_out_answers_success_true(signed_in):
    response = signed_in.api_post("/sign-out")
    assert response.status_code == 200
    assert response.json() == {"success": True}


def test_sign_out_deletes_the_session_row(signed_in):
    signed_in.api_post("/sign-out")
    assert not Session.objects.filter(token=signed_in.token).exists()


def test_sign_out_ends_only_that_session(signed_in):
    other = ApiClient()
    other_token = other.api_post("/sign-in/email", {"email": signed_in.user.email,
                                                    "password": "correct horse battery"}).json()["token"]
    signed_in.api_post("/sign-out")
    assert Session.objects.filter(token=other_token).exists()


def test_after_sign_out_get_session_is_null(signed_in):
    signed_in.api_post("/sign-out")
    assert signed_in.api_get("/get-session").content == b"null"


def test_sign_out_clears_the_session_cookies(signed_in):
    cookies = set_cookies(signed_in.api_post("/sign-out"))
    assert {name: value for name, (value, _) in cookies.items()} == {
        "auth.session_token": "", "auth.session_data": "", "auth.dont_remember": ""}


def test_sign_out_without_any_cookie_succeeds_and_still_clears(api, db):
    response = api.api_post("/sign-out")
    assert response.json() == {"success": True}
    assert set(set_cookies(response)) == {"auth.session_token", "auth.session_data",
                                          "auth.dont_remember"}


def test_sign_out_accepts_an_empty_json_object(signed_in):
    assert signed_in.api_post("/sign-out", {}).json() == {"success": True}


def test_sign_out_with_a_tampered_cookie_succeeds_and_deletes_nothing(api, user):
    from tests.test_cookies import make_session

    session = make_session(user)
    api.cookies["auth.session_token"] = session.token + ".forged"
    assert api.api_post("/sign-out").json() == {"success": True}
    assert Session.objects.filter(pk=session.pk).exists()


def test_sign_out_with_cookie_but_no_origin_is_403_and_the_session_survives(signed_in):
    signed_in.origin = None
    response = signed_in.api_post("/sign-out")
    assert response.status_code == 403
    assert error_of(response)["code"] == "MISSING_OR_NULL_ORIGIN"
    assert Session.objects.filter(token=signed_in.token).exists()
    assert set_cookies(response) == {}


def test_sign_out_from_an_untrusted_origin_is_403(signed_in):
    response = signed_in.api_post("/sign-out", HTTP_ORIGIN="https://evil.com")
    assert error_of(response)["code"] == "INVALID_ORIGIN"
    assert Session.objects.filter(token=signed_in.token).exists()


def test_sign_out_with_an_untrusted_callback_url_is_403(signed_in):
    response = signed_in.api_post("/sign-out", {"callbackURL": "https://evil.com"})
    assert error_of(response)["code"] == "INVALID_CALLBACK_URL"
    assert Session.objects.filter(token=signed_in.token).exists()


def test_sign_out_body_fields_are_type_checked(signed_in):
    response = signed_in.api_post("/sign-out", {"disableRedirect": "yes"})
    assert error_of(response)["message"] == \
        "[body.disableRedirect] Invalid input: expected boolean, received string"


def test_sign_out_of_a_dont_remember_session_clears_dont_remember(api, user):
    api.api_post("/sign-in/email", {"email": user.email, "password": "correct horse battery",
                                    "rememberMe": False})
    cookies = set_cookies(api.api_post("/sign-out"))
    assert cookies["auth.dont_remember"][0] == ""
    assert cookies["auth.dont_remember"][1]["max-age"] == "0"
