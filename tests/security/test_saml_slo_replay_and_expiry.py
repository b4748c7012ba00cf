"""SAML Single Logout: a genuine logout message works once, and only while it is fresh (I9).

The attacker holds genuine, signed logout messages of the victim's IdP (an old one from their own
browser history, say). Replayed, the message ends nothing: its ID is reserved in the ACS's replay
store (one store for assertions and logout messages, in the database, so every process agrees). A
message whose IssueInstant is older than ``logout_request_ttl`` + ``clock_skew``, or whose
NotOnOrAfter is past, is refused, as is one issued in the future.
"""

from datetime import timedelta

import pytest

from sso.models import SamlUsedAssertion
from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    Message,
    acme,
    alive,
    configure_sso,
    get_slo,
    idp_entity,
    post_form,
    post_slo,
    redirect_query,
    refusal,
    saml_signed_in,
    slo_keys,
    slo_on,
    slo_url,
)
from tests.sso.saml.idp_signer import now


def request(**changes):
    return Message(issuer=idp_entity("acme"), destination=slo_url("acme"), **changes)


@pytest.fixture
def ada(acme, make_user):
    return saml_signed_in(make_user, acme, "ada@acme.com", "_session-ada")


def test_a_replayed_post_logout_request_is_refused(ada, acme, make_user, slo_keys, tmp_path):
    form = post_form(request(), slo_keys["idp"], tmp_path)
    assert post_slo("acme", form).status_code == 200
    assert not alive(ada)
    again = saml_signed_in(make_user, acme, "ada2@acme.com", "_session-ada")  # a later session, same index
    code, message = refusal(post_slo("acme", form))
    assert (code, message) == ("INVALID_LOGOUT_REQUEST", "Invalid LogoutRequest: the message was already used")
    assert alive(again)


def test_a_replayed_redirect_logout_request_is_refused(ada, slo_keys):
    query = redirect_query(request(), slo_keys["idp"])
    assert get_slo("acme", query).status_code == 302
    code, message = refusal(get_slo("acme", query))
    assert message.endswith("the message was already used")


def test_the_replay_tombstone_lives_in_the_acs_replay_store(ada, slo_keys, tmp_path):
    message = request()
    post_slo("acme", post_form(message, slo_keys["idp"], tmp_path))
    assert SamlUsedAssertion.objects.filter(identifier=f"saml-used-logout:{message.message_id}").exists()


def test_an_old_logout_request_is_expired(ada, slo_keys, tmp_path):
    old = request(issue_instant=now() - timedelta(minutes=11))  # ttl 5 min + skew 5 min
    code, message = refusal(post_slo("acme", post_form(old, slo_keys["idp"], tmp_path)))
    assert (code, message) == ("INVALID_LOGOUT_REQUEST", "Invalid LogoutRequest: the message has expired")
    assert alive(ada)


def test_a_logout_request_past_its_not_on_or_after_is_expired(ada, slo_keys, tmp_path):
    stale = request(not_on_or_after=now() - timedelta(minutes=6))
    code, message = refusal(post_slo("acme", post_form(stale, slo_keys["idp"], tmp_path)))
    assert message.endswith("the message has expired")
    assert alive(ada)


def test_a_logout_request_from_the_future_is_refused(ada, slo_keys, tmp_path):
    early = request(issue_instant=now() + timedelta(minutes=6))
    code, message = refusal(post_slo("acme", post_form(early, slo_keys["idp"], tmp_path)))
    assert message.endswith("the message is not yet valid")
    assert alive(ada)


def test_a_logout_request_within_the_clock_skew_is_accepted(ada, slo_keys, tmp_path):
    slightly_old = request(issue_instant=now() - timedelta(minutes=8))
    assert post_slo("acme", post_form(slightly_old, slo_keys["idp"], tmp_path)).status_code == 200
    assert not alive(ada)
