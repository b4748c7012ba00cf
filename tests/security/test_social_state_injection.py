"""I1 / I4: the client's free-form ``additionalData`` must not steer the social OAuth callback.

POST /sign-in/social used to merge ``additionalData`` into the state row under the keys the callback
trusts, protecting only those whose own value was not None. So anyone could inject:

- ``link`` = {"userId": <victim id>, "email": <attacker's social e-mail>}: the callback attached the
  attacker's social subject to the victim's user, and every later social sign-in gave the attacker
  the victim's session (I1);
- ``errorURL`` / ``newUserURL``, which never pass the router's URL-field check: the auth origin
  redirected anywhere, ``javascript:`` included, and the errorURL even without the state cookie (I4);
- ``requestSignUp``, bypassing a provider's ``disableImplicitSignUp``.

Must hold: the client's data lives in its own namespace of the state; the callback reads only the
keys the server wrote; and every URL read back from a state passes the one URL rule again before
the browser is sent there.
"""

import json

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account, Verification
from tests.conftest import ApiClient
from tests.peers.social import (  # noqa: F401 - fixtures
    _stub_server, callback, corp, start, stub,
)

pytestmark = pytest.mark.django_db

EVIL = "https://evil.example/phish"


def _rewrite_state(state, **changes):
    """Edit a stored state row, as a second line of defence must survive a state that went bad."""
    row = Verification.objects.get(identifier=state)
    row.value = json.dumps({**json.loads(row.value), **changes})
    row.save()


def test_additional_data_link_does_not_attach_the_attackers_subject_to_the_victim(api, corp, make_user):
    victim = make_user(email="victim@example.com", email_verified=True)
    attacker = ApiClient()
    _, query = start(attacker, callbackURL="/dashboard",
                     additionalData={"link": {"userId": str(victim.pk), "email": "mallory@evil.example"}})
    corp.token_claims = corp.claims(query["nonce"], sub="sub-mallory", email="mallory@evil.example")
    assert callback(attacker, code="c", state=query["state"]).status_code == 302
    assert not Account.objects.filter(user=victim, provider_id="corp").exists()


def test_attackers_later_social_sign_in_never_yields_the_victims_session(api, corp, make_user):
    victim = make_user(email="victim@example.com", email_verified=True)
    attacker = ApiClient()
    _, query = start(attacker, callbackURL="/dashboard",
                     additionalData={"link": {"userId": str(victim.pk), "email": "mallory@evil.example"}})
    corp.token_claims = corp.claims(query["nonce"], sub="sub-mallory", email="mallory@evil.example")
    callback(attacker, code="c", state=query["state"])
    again = ApiClient()
    _, query = start(again, callbackURL="/dashboard")
    corp.token_claims = corp.claims(query["nonce"], sub="sub-mallory", email="mallory@evil.example")
    callback(again, code="c", state=query["state"])
    session = again.api_get("/get-session").json()
    assert not session or session["user"]["email"] != "victim@example.com"


@pytest.mark.parametrize("url", [EVIL, "javascript:alert(document.domain)//"])
def test_additional_data_error_url_is_not_an_open_redirect(api, corp, url):
    _, query = start(api, additionalData={"errorURL": url})
    response = callback(ApiClient(), code="c", state=query["state"])  # any browser, no state cookie
    assert response.status_code == 302
    assert not response["Location"].startswith(url[:20])
    assert "error=state_mismatch" in response["Location"]


def test_additional_data_new_user_url_is_not_an_open_redirect(api, corp):
    _, query = start(api, callbackURL="/dashboard", additionalData={"newUserURL": EVIL})
    corp.token_claims = corp.claims(query["nonce"], sub="sub-new", email="new@example.com")
    response = callback(api, code="c", state=query["state"])
    assert response.status_code == 302 and response["Location"] == "/dashboard"


def test_additional_data_request_sign_up_does_not_bypass_disable_implicit_sign_up(api, corp, configure):
    configure(social_providers={"corp": {"disableImplicitSignUp": True}})
    _, query = start(api, callbackURL="/dashboard", additionalData={"requestSignUp": True})
    corp.token_claims = corp.claims(query["nonce"], sub="sub-new", email="new@example.com")
    response = callback(api, code="c", state=query["state"])
    assert "error=signup_disabled" in response["Location"]
    assert not get_user_model().objects.filter(email="new@example.com").exists()


def test_additional_data_is_kept_in_its_own_namespace_of_the_state(api, corp):
    data = {"plan": "pro", "link": {"userId": "1"}, "errorURL": EVIL, "codeVerifier": "x"}
    _, query = start(api, callbackURL="/dashboard", additionalData=data)
    value = json.loads(Verification.objects.get(identifier=query["state"]).value)
    assert value["additionalData"] == data
    assert value["link"] is None and value["errorURL"] is None and value["newUserURL"] is None
    assert value["requestSignUp"] is None and value["codeVerifier"] != "x" and "plan" not in value


def test_untrusted_error_url_read_back_from_a_state_is_not_followed(api, corp):
    _, query = start(api, callbackURL="/dashboard")
    _rewrite_state(query["state"], errorURL=EVIL)
    response = callback(ApiClient(), code="c", state=query["state"])
    assert not response["Location"].startswith("https://evil.example")
    assert "error=state_mismatch" in response["Location"]


def test_untrusted_callback_url_read_back_from_a_state_is_not_followed(api, corp):
    _, query = start(api, callbackURL="/dashboard")
    _rewrite_state(query["state"], callbackURL=EVIL)
    corp.token_claims = corp.claims(query["nonce"], sub="sub-ada")
    response = callback(api, code="c", state=query["state"])
    assert not response["Location"].startswith("https://evil.example")
    assert "error=no_callback_url" in response["Location"]


def test_untrusted_new_user_url_read_back_from_a_state_falls_back_to_the_callback_url(api, corp):
    _, query = start(api, callbackURL="/dashboard", newUserCallbackURL="/welcome")
    _rewrite_state(query["state"], newUserURL="javascript:alert(1)//")
    corp.token_claims = corp.claims(query["nonce"], sub="sub-new", email="new@example.com")
    assert callback(api, code="c", state=query["state"])["Location"] == "/dashboard"


@pytest.mark.parametrize("field", ["callbackURL", "errorCallbackURL", "newUserCallbackURL"])
def test_in_process_sign_in_social_refuses_an_untrusted_url_up_front(corp, field):
    from authservice.api.server import auth
    from authservice.errors import APIError

    with pytest.raises(APIError) as refused:
        auth.api.sign_in_social(body={"provider": "corp", field: EVIL})
    assert refused.value.status_code == 403 and refused.value.code.startswith("INVALID_")
    assert not Verification.objects.exists()
