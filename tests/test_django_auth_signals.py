"""Django's own auth signals: ``user_logged_in`` (and so ``last_login``) on every sign-in,
``user_logged_out`` on sign-out, ``user_login_failed`` on a failed password, never with the password."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth import signals as django_signals
from django.http import HttpRequest

from tests.conftest import PASSWORD
from tests.peers.social import _stub_server, corp, sign_in_with_corp, stub  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


@pytest.fixture
def received():
    """``received[name]`` = list of (sender, kwargs) seen by a receiver of Django's signal ``name``."""
    log = {}
    connected = []
    for name in ("user_logged_in", "user_logged_out", "user_login_failed"):
        def receiver(sender, _name=name, **kwargs):
            kwargs.pop("signal")
            log.setdefault(_name, []).append((sender, kwargs))
        getattr(django_signals, name).connect(receiver, weak=False)
        connected.append((name, receiver))
    yield log
    for name, receiver in connected:
        getattr(django_signals, name).disconnect(receiver)


def sign_in(api, email="ada@example.com", password=PASSWORD):
    return api.api_post("/sign-in/email", {"email": email, "password": password})


# --- user_logged_in --------------------------------------------------------------------------------
def test_email_sign_in_sets_last_login(api, user):
    assert user.last_login is None
    sign_in(api)
    user.refresh_from_db()
    assert user.last_login is not None


def test_email_sign_in_sends_user_logged_in_with_the_user_and_the_request(api, user, received):
    sign_in(api)
    [(sender, kwargs)] = received["user_logged_in"]
    assert sender is get_user_model()
    assert set(kwargs) == {"user", "request"}
    assert kwargs["user"].pk == user.pk
    assert isinstance(kwargs["request"], HttpRequest)


def test_sign_up_with_auto_sign_in_sets_last_login(api, db):
    sign_up = api.api_post("/sign-up/email", {"name": "Ada", "email": "ada@example.com", "password": PASSWORD})
    assert sign_up.status_code == 200
    assert get_user_model().objects.get().last_login is not None


def test_sign_up_without_a_session_sends_no_user_logged_in(configure, api, db, received):
    configure(email_and_password={"auto_sign_in": False})
    api.api_post("/sign-up/email", {"name": "Ada", "email": "ada@example.com", "password": PASSWORD})
    assert "user_logged_in" not in received


def test_social_sign_in_sets_last_login(api, corp):  # noqa: F811 - fixture
    response = sign_in_with_corp(api, corp, sub="sub-ada")
    assert response.status_code == 302
    assert get_user_model().objects.get().last_login is not None


def test_an_in_process_sign_in_without_a_request_sends_request_none(user, received):
    from authservice import auth

    auth.api.sign_in_email(body={"email": user.email, "password": PASSWORD}, headers={})
    [(_, kwargs)] = received["user_logged_in"]
    assert kwargs["request"] is None


def test_get_session_sends_no_user_logged_in(signed_in, received):
    signed_in.api_get("/get-session")
    assert "user_logged_in" not in received


# --- user_logged_out -------------------------------------------------------------------------------
def test_sign_out_sends_user_logged_out_with_the_user(signed_in, received):
    signed_in.api_post("/sign-out")
    [(sender, kwargs)] = received["user_logged_out"]
    assert sender is get_user_model()
    assert kwargs["user"].pk == signed_in.user.pk
    assert isinstance(kwargs["request"], HttpRequest)


def test_sign_out_without_a_session_sends_no_user_logged_out(api, db, received):
    api.api_post("/sign-out")
    assert "user_logged_out" not in received


# --- user_login_failed -----------------------------------------------------------------------------
def test_a_wrong_password_sends_user_login_failed_without_the_password(api, user, received):
    sign_in(api, password="not the password")
    [(_, kwargs)] = received["user_login_failed"]
    assert kwargs["credentials"] == {"email": "ada@example.com"}
    assert isinstance(kwargs["request"], HttpRequest)
    assert "not the password" not in repr(kwargs["credentials"])


def test_an_unknown_address_sends_user_login_failed(api, db, received):
    sign_in(api, email="Nobody@Example.com")
    [(_, kwargs)] = received["user_login_failed"]
    assert kwargs["credentials"] == {"email": "nobody@example.com"}


def test_a_successful_sign_in_sends_no_user_login_failed(api, user, received):
    sign_in(api)
    assert "user_login_failed" not in received
