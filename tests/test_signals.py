"""Signals of sign-up, sign-in, sign-out and revocation: sent after the change, with their kwargs."""

import pytest
from django.contrib.auth import get_user_model

from authservice import auth, signals
from authservice.models import Session
from tests.conftest import PASSWORD, ApiClient


@pytest.fixture
def received():
    """``received[signal_name]`` = list of (sender, kwargs) seen by a real receiver."""
    log = {}
    receivers = []
    for name in ("user_created", "user_signed_in", "user_signed_out", "session_revoked"):
        def receiver(sender, _name=name, **kwargs):
            kwargs.pop("signal")
            # What the database holds at the moment the signal is sent.
            session = kwargs.get("session")
            kwargs["_session_stored"] = session is not None and Session.objects.filter(pk=session.pk).exists()
            user = kwargs.get("user")
            kwargs["_user_stored"] = user is not None and get_user_model().objects.filter(pk=user.pk).exists()
            log.setdefault(_name, []).append((sender, kwargs))
        getattr(signals, name).connect(receiver, weak=False)
        receivers.append((name, receiver))
    yield log
    for name, receiver in receivers:
        getattr(signals, name).disconnect(receiver)


def public(kwargs):
    return {key for key in kwargs if not key.startswith("_")}


def test_sign_up_sends_user_created_with_user_and_provider(api, db, received):
    user_id = api.api_post("/sign-up/email", {"name": "A", "email": "a@example.com", "password": PASSWORD}
                           ).json()["user"]["id"]
    [(sender, kwargs)] = received["user_created"]
    assert sender is get_user_model()
    assert public(kwargs) == {"user", "provider"}
    assert str(kwargs["user"].pk) == user_id
    assert kwargs["provider"] == "credential"
    assert kwargs["_user_stored"]


def test_sign_up_with_auto_sign_in_sends_user_signed_in(api, db, received):
    token = api.api_post("/sign-up/email", {"name": "A", "email": "a@example.com", "password": PASSWORD}
                         ).json()["token"]
    [(sender, kwargs)] = received["user_signed_in"]
    assert sender is Session
    assert public(kwargs) == {"user", "session"}
    assert kwargs["session"].token == token
    assert kwargs["_session_stored"]


def test_sign_up_without_session_sends_no_user_signed_in(configure, api, db, received):
    configure(email_and_password={"auto_sign_in": False})
    api.api_post("/sign-up/email", {"name": "A", "email": "a@example.com", "password": PASSWORD})
    assert len(received["user_created"]) == 1
    assert "user_signed_in" not in received


def test_a_failed_sign_up_sends_nothing(api, user, received):
    api.api_post("/sign-up/email", {"name": "A", "email": user.email, "password": PASSWORD})
    assert received == {}


def test_sign_in_sends_user_signed_in_with_user_and_session(api, user, received):
    token = api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD}).json()["token"]
    [(sender, kwargs)] = received["user_signed_in"]
    assert sender is Session
    assert public(kwargs) == {"user", "session"}
    assert kwargs["user"].pk == user.pk
    assert kwargs["session"].token == token
    assert kwargs["_session_stored"]


def test_a_failed_sign_in_sends_nothing(api, user, received):
    api.api_post("/sign-in/email", {"email": user.email, "password": "wrong"})
    assert received == {}


def test_an_in_process_sign_in_sends_user_signed_in(user, received):
    auth.api.sign_in_email(body={"email": user.email, "password": PASSWORD})
    assert len(received["user_signed_in"]) == 1


def test_sign_out_sends_user_signed_out_after_the_session_is_gone(signed_in, received):
    signed_in.api_post("/sign-out")
    [(sender, kwargs)] = received["user_signed_out"]
    assert sender is Session
    assert public(kwargs) == {"user", "session"}
    assert kwargs["user"].pk == signed_in.user.pk
    assert kwargs["session"].token == signed_in.token
    assert not kwargs["_session_stored"]


def test_sign_out_without_session_sends_nothing(api, db, received):
    api.api_post("/sign-out")
    assert received == {}


def test_revoke_session_sends_session_revoked(signed_in, received):
    other = ApiClient()
    other_token = other.api_post("/sign-in/email", {"email": signed_in.user.email, "password": PASSWORD}
                                 ).json()["token"]
    received.clear()
    signed_in.api_post("/revoke-session", {"token": other_token})
    [(sender, kwargs)] = received["session_revoked"]
    assert sender is Session
    assert public(kwargs) == {"user", "session"}
    assert kwargs["user"].pk == signed_in.user.pk
    assert kwargs["session"].token == other_token
    assert not kwargs["_session_stored"]


def test_revoke_session_of_a_foreign_token_sends_nothing(signed_in, make_user, received):
    from tests.test_cookies import make_session

    foreign = make_session(make_user(email="eve@example.com"))
    signed_in.api_post("/revoke-session", {"token": foreign.token})
    assert "session_revoked" not in received


def test_revoke_sessions_sends_one_signal_per_session(signed_in, received):
    for _ in range(2):
        ApiClient().api_post("/sign-in/email", {"email": signed_in.user.email, "password": PASSWORD})
    received.clear()
    signed_in.api_post("/revoke-sessions")
    revoked = received["session_revoked"]
    assert len(revoked) == 3
    assert signed_in.token in {kwargs["session"].token for _, kwargs in revoked}
    assert not any(kwargs["_session_stored"] for _, kwargs in revoked)


def test_revoke_other_sessions_spares_the_current_one(signed_in, received):
    ApiClient().api_post("/sign-in/email", {"email": signed_in.user.email, "password": PASSWORD})
    received.clear()
    signed_in.api_post("/revoke-other-sessions")
    [(_, kwargs)] = received["session_revoked"]
    assert kwargs["session"].token != signed_in.token


def test_a_receiver_that_raises_does_not_undo_the_sign_up(api, db):
    def explode(sender, **kwargs):
        raise RuntimeError("receiver failed")

    signals.user_signed_in.connect(explode, weak=False)
    try:
        response = api.api_post("/sign-up/email", {"name": "A", "email": "a@example.com",
                                                   "password": PASSWORD})
    finally:
        signals.user_signed_in.disconnect(explode)
    assert response.status_code == 500
    assert get_user_model().objects.filter(email="a@example.com").exists()
    assert Session.objects.filter(user__email="a@example.com").exists()
