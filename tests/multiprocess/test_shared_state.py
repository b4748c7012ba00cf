"""Two server processes agree on everything that must be shared (issue 8 §3).

Each test acts on server A and checks on server B (or races both), through Redis or through the database
(the ``pair`` fixture's two variants). Verification e-mail tokens are not here: they are stateless and
reusable until they expire by design (core.md), so there is nothing for the two processes to agree on.
"""

import re
import threading

from tests.multiprocess.conftest import PASSWORD

NEW_PASSWORD = "battery staple horse"


def _reset_token(pair, email):
    (message,) = pair.mail_to(email)
    return re.search(r"Reset code: ([A-Za-z0-9]+)", message.get_body(("plain",)).get_content()).group(1)


def _request_reset(pair, client, server, email):
    response = client.api_post(server, "/request-password-reset", {"email": email})
    assert response.status_code == 200, response.text
    return _reset_token(pair, email)


def test_a_session_made_on_one_is_seen_on_the_other(pair):
    client, email = pair.client(), pair.email()
    client.sign_up(pair.a, email)

    assert client.session_of(pair.b)["user"]["email"] == email


def test_the_rate_limit_is_counted_across_both(pair):
    client = pair.client()
    counters_before = pair.stored_counters()
    wrong = {"email": pair.email(), "password": "not the password"}

    answers = [client.api_post(pair.a, "/sign-in/email", wrong).status_code for _ in range(3)]
    blocked = client.api_post(pair.b, "/sign-in/email", wrong)

    assert answers == [401, 401, 401]
    assert blocked.status_code == 429, blocked.text
    assert blocked.json()["code"] == "TOO_MANY_REQUESTS"
    assert int(blocked.headers["X-Retry-After"]) >= 1
    assert pair.stored_counters() > counters_before  # counted in Redis, or in the database without it


def test_a_session_revoked_on_one_is_gone_on_the_other(pair):
    email = pair.email()
    laptop, phone = pair.client(), pair.client()
    laptop.sign_up(pair.a, email)
    phone_token = phone.sign_in(pair.b, email)["token"]

    response = laptop.api_post(pair.a, "/revoke-session", {"token": phone_token})

    assert response.status_code == 200, response.text
    assert phone.session_of(pair.b) is None
    listed = laptop.api_get(pair.b, "/list-sessions").json()
    assert phone_token not in [session["token"] for session in listed]


def test_a_sign_out_on_one_ends_the_session_on_the_other(pair):
    client, email = pair.client(), pair.email()
    client.sign_up(pair.a, email)
    cookies = client.cookies.copy()  # what a second tab, or an attacker holding the cookie, still sends

    response = client.api_post(pair.a, "/sign-out")

    assert response.status_code == 200, response.text
    client.cookies = cookies
    assert client.session_of(pair.b) is None


def test_a_reset_token_used_on_one_is_refused_on_the_other(pair):
    client, email = pair.client(), pair.email()
    client.sign_up(pair.a, email)
    token = _request_reset(pair, client, pair.a, email)

    used = client.api_post(pair.a, "/reset-password", {"token": token, "newPassword": NEW_PASSWORD})
    reused = client.api_post(pair.b, "/reset-password", {"token": token, "newPassword": "a third password"})

    assert used.status_code == 200, used.text
    assert reused.status_code == 400, reused.text
    assert reused.json()["code"] == "INVALID_TOKEN"
    pair.client().sign_in(pair.b, email, NEW_PASSWORD)


def test_a_reset_token_raced_on_both_is_used_once(pair):
    client, email = pair.client(), pair.email()
    client.sign_up(pair.a, email)
    token = _request_reset(pair, client, pair.b, email)
    start = threading.Barrier(2)
    statuses = {}

    def use(server, password):
        racer = pair.client()
        start.wait()
        statuses[server.name] = racer.api_post(server, "/reset-password", {"token": token, "newPassword": password})

    racers = [threading.Thread(target=use, args=(server, f"{NEW_PASSWORD} {server.name}"))
              for server in pair.servers]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(timeout=30)

    assert sorted(r.status_code for r in statuses.values()) == [200, 400], {k: r.text for k, r in statuses.items()}
    (winner,) = [name for name, r in statuses.items() if r.status_code == 200]
    pair.client().sign_in(pair.a, email, f"{NEW_PASSWORD} {winner}")
    assert pair.client().api_post(pair.b, "/sign-in/email", {"email": email, "password": PASSWORD}).status_code == 401


def test_no_server_logged_an_error(pair):
    assert pair.server_errors() == [], pair.a.log()[-3000:] + pair.b.log()[-3000:]
