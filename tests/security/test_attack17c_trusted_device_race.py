"""Attack 17c: one trusted-device cookie replayed from many browsers at once (PostgreSQL).

The thief holds the password and a copy of the victim's ``trust_device`` cookie (taken once). Each use
replaces the cookie (rotation): the copy is good for one sign-in, the victim's own browser's next one
notices nothing wrong... unless the copy can be spent many times by racing. Fired together, the copies
must skip the second factor at most once in total (I9: single-use state stays single-use across
processes). SQLite serialises writers, so this runs on PostgreSQL only.
"""

import threading

import pytest
from django.db import connection

from tests.conftest import PASSWORD, ApiClient
from tests.two_factor_support import code, enrol, start_sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs a database with concurrent writers"),
]

COPIES = 8


def test_one_trusted_device_cookie_replayed_at_once_skips_the_second_factor_once(make_user):
    user = make_user()
    owner = ApiClient()
    assert owner.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD}).status_code == 200
    secret, _ = enrol(owner)
    browser = start_sign_in(user.email)
    assert browser.api_post("/two-factor/verify-totp", {"code": code(secret, 1), "trustDevice": True}).status_code == 200
    stolen = browser.cookies["auth.trust_device"].value

    copies = []
    for _ in range(COPIES):
        copy = ApiClient()
        copy.cookies["auth.trust_device"] = stolen
        copies.append(copy)
    barrier = threading.Barrier(COPIES)
    skipped = []

    def run(client):
        try:
            barrier.wait()
            answer = client.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD})
            skipped.append(answer.status_code == 200 and "token" in answer.json())
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(copy,)) for copy in copies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(skipped) == COPIES
    assert sum(skipped) <= 1
