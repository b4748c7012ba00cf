"""I1 / I7: change-email must not hand the attacker an address, or an account, they do not own.

The attacker (an ordinary signed-in account) tries: moving onto a victim's taken address (nothing
happens, and the answer equals that for a free address), applying the mailed link while signed in as
someone else, tampering with the signed token's payload (``email``/``updateTo`` swapped, the
signature reused, the salt of another purpose), flipping ``requestType`` to skip the new-mailbox
proof, and driving change-email cross-site with the victim's cookie. (A stateless link that names
its account by address and outlives a release of that address does take over the next owner: that
hole is reported separately, not tested here.)
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail, signing

from authservice import app_settings
from authservice.flows import verification
from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db


def _client(email):
    client = ApiClient()
    assert client.api_post("/sign-in/email", {"email": email, "password": PASSWORD}).status_code == 200
    return client


@pytest.fixture
def people(make_user):
    victim = make_user(email="victim@example.com", email_verified=True)
    mallory = make_user(email="mallory@example.com")
    return victim, mallory


def test_moving_onto_a_taken_address_does_nothing_and_looks_like_a_free_one(people):
    victim, mallory = people
    client = _client("mallory@example.com")
    mail.outbox.clear()
    taken = client.api_post("/change-email", {"newEmail": "victim@example.com"})
    free = client.api_post("/change-email", {"newEmail": "free@example.com"})
    assert (taken.status_code, taken.content) == (free.status_code, free.content)
    assert [m.to for m in mail.outbox] == [["free@example.com"]]
    assert get_user_model().objects.get(pk=victim.pk).email == "victim@example.com"


def test_link_applied_in_another_users_session_is_refused(people):
    victim, mallory = people
    token = verification.make_token("mallory@example.com", "new@example.com", "change-email-verification")
    victim_client = _client("victim@example.com")
    response = victim_client.api_get("/verify-email", {"token": token})
    assert response.status_code == 401
    assert get_user_model().objects.get(pk=victim.pk).email == "victim@example.com"


def test_tampered_tokens_are_refused(people):
    victim, _ = people
    token = verification.make_token("mallory@example.com", "mallory2@example.com", "change-email-verification")
    payload, _, signature = token.rpartition(":")
    forged_payload = signing.dumps({"email": "victim@example.com", "updateTo": "mallory2@example.com",
                                    "requestType": "change-email-verification", "exp": 9999999999},
                                   key="guess", salt=verification.SALT)
    other_salt = signing.dumps({"email": "victim@example.com", "updateTo": "m@example.com", "exp": 9999999999,
                                "requestType": "change-email-verification"}, key=app_settings.secret(), salt="other")
    for forged in (forged_payload, other_salt, forged_payload.rpartition(":")[0] + ":" + signature,
                   "eyJ" + token[3:10] + ("A" if token[10] != "A" else "B") + token[11:]):
        assert ApiClient().api_get("/verify-email", {"token": forged}).status_code == 401, forged
    assert get_user_model().objects.get(pk=victim.pk).email == "victim@example.com"


def test_confirmation_link_to_the_old_mailbox_does_not_move_the_address(people, configure):
    configure(change_email={"send_confirmation_to_old_email": True})
    victim, _ = people
    client = _client("victim@example.com")
    mail.outbox.clear()
    assert client.api_post("/change-email", {"newEmail": "new@example.com"}).status_code == 200
    token = re.search(r"token=([^&\s]+)", mail.outbox[-1].body).group(1)
    assert mail.outbox[-1].to == ["victim@example.com"]
    ApiClient().api_get("/verify-email", {"token": token})
    assert get_user_model().objects.get(pk=victim.pk).email == "victim@example.com"
    assert mail.outbox[-1].to == ["new@example.com"]


def test_cross_site_change_email_with_the_victims_cookie_is_refused(people):
    victim, _ = people
    client = _client("victim@example.com")
    for origin in ("https://evil.example", "null", "http://127.0.0.1:8000.evil.example"):
        response = client.api_post("/change-email", {"newEmail": "mallory2@example.com"}, HTTP_ORIGIN=origin)
        assert response.status_code in (400, 403), origin
    client.origin = None
    response = client.api_post("/change-email", {"newEmail": "mallory2@example.com"})
    assert response.status_code == 403
