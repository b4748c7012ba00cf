"""I1 / I9: the social OAuth state is the attacker's lever on the callback; it must not move.

The attacker tries to steer a flow through the client-supplied ``additionalData`` of
/sign-in/social by naming the keys the callback trusts (``codeVerifier``, ``oauthState``,
``providerId``, ``callbackURL``, ``expiresAt``, ``idTokenNonce``), to finish a victim's flow from
another browser (login CSRF: the state without its cookie, the attacker's cookie with the victim's
state), to replay a used state, to sign in with an ID token for another audience or without a
signature (``alg: none``), and to link their social subject to the victim's user through
/link-social of their own session. (additionalData's ``link``/``errorURL``/``newUserURL`` keys do get
through: that hole is reported separately, not tested here.)
"""

import base64
import json

import pytest
from django.contrib.auth import get_user_model

from authservice.models import Account, Verification
from tests.conftest import ApiClient, PASSWORD
from tests.peers.social import (  # noqa: F401 - fixtures
    _stub_server, callback, corp, start, stub,
)

pytestmark = pytest.mark.django_db


def test_additional_data_cannot_replace_the_keys_the_callback_relies_on(api, corp):
    _, query = start(api, callbackURL="/dashboard", additionalData={
        "codeVerifier": "attacker-verifier", "oauthState": "x", "providerId": "other",
        "callbackURL": "https://evil.example/", "expiresAt": 99999999999999, "idTokenNonce": "n"})
    value = json.loads(Verification.objects.get(identifier=query["state"]).value)
    assert value["codeVerifier"] != "attacker-verifier" and value["oauthState"] == query["state"]
    assert value["providerId"] == "corp" and value["callbackURL"] == "/dashboard"
    assert value["idTokenNonce"] == query["nonce"] and value["expiresAt"] < 99999999999999


def test_victims_state_cannot_be_finished_by_another_browser(api, corp):
    _, query = start(api, callbackURL="/dashboard")
    attacker = ApiClient()
    _, own = start(attacker)  # the attacker holds a valid state cookie of their own flow
    corp.token_claims = corp.claims(query["nonce"], sub="sub-mallory", email="mallory@example.com")
    response = callback(attacker, code="c", state=query["state"])
    assert "error=state_mismatch" in response["Location"]
    assert not get_user_model().objects.exists()


def test_used_state_is_not_accepted_twice(api, corp):
    _, query = start(api, callbackURL="/dashboard")
    cookie = api.cookies["auth.state"].value
    corp.token_claims = corp.claims(query["nonce"], sub="sub-ada")
    assert "error" not in callback(api, code="c", state=query["state"])["Location"]
    again = ApiClient()
    again.cookies["auth.state"] = cookie
    assert "error=state_mismatch" in callback(again, code="c", state=query["state"])["Location"]


def _unsigned(claims):
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


def test_id_token_sign_in_refuses_unsigned_foreign_and_hs256_tokens(api, corp, make_user):
    make_user(email="victim@example.com", email_verified=True)
    claims = corp.claims(None, sub="sub-x", email="victim@example.com")
    foreign = dict(claims, aud="another-client")
    for token in (_unsigned(claims), corp.key.sign(foreign)):
        response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": token}})
        assert response.status_code == 401, response.content
    import jwt
    hs = jwt.encode(claims, "a-secret-guess-that-is-32-bytes-long!!", algorithm="HS256")
    response = api.api_post("/sign-in/social", {"provider": "corp", "idToken": {"token": hs}})
    assert response.status_code == 401
    assert not Account.objects.filter(provider_id="corp").exists()


def test_link_social_links_only_to_the_callers_own_user(api, corp, make_user):
    victim = make_user(email="victim@example.com", email_verified=True)
    make_user(email="mallory@example.com", email_verified=True)
    mallory = ApiClient()
    assert mallory.api_post("/sign-in/email", {"email": "mallory@example.com", "password": PASSWORD}).status_code == 200
    response = mallory.api_post("/link-social", {"provider": "corp", "callbackURL": "/dashboard"})
    assert response.status_code == 200
    state = Verification.objects.exclude(identifier__startswith="reset").latest("created_at")
    value = json.loads(state.value)
    assert value["link"]["userId"] != victim.pk
    corp.token_claims = corp.claims(value["idTokenNonce"], sub="sub-mallory", email="mallory@example.com")
    callback(mallory, code="c", state=state.identifier)
    assert not Account.objects.filter(user=victim, provider_id="corp").exists()
