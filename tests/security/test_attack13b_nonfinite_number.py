"""Attack 13b: a JSON number that overflows to infinity (``1e309``) in a ``number`` additional field.

Python's ``json.loads`` turns ``1e309`` into ``float('inf')``; the body parser refuses only the literals
``NaN``/``Infinity`` (``parse_constant``), and ``inputs.Number``/``NumberList`` accept any float. Then:

- sign-up of a FREE address: ``AuthProfile.data`` = ``{"extra": Infinity}`` fails SQLite's
  ``JSON_VALID`` CHECK (PostgreSQL's jsonb refuses it too), the IntegrityError is read as a concurrent
  duplicate, and the answer is 422 USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL;
- sign-up of a TAKEN address (verification required: the made-up user): 200 with ``"extra":Infinity``.

So one request tells whether any address has an account (I7), and the 200 body is not even JSON.
update-user with the same value is a 500 (I4).

Fix at the mechanism: the JSON body parser refuses numbers that are not finite (``parse_float`` that
raises on ``inf``), so no field of any endpoint ever sees one; and sign-up's ``except IntegrityError``
should answer "exists" only when the address is in fact taken.
"""

import json

import pytest

from tests.conftest import ORIGIN, PASSWORD

pytestmark = pytest.mark.django_db


def _raw(client, path, body):
    return client.generic("POST", "/api/auth" + path, body, content_type="application/json", HTTP_ORIGIN=ORIGIN)


def _sign_up(client, email, value):
    return _raw(client, "/sign-up/email",
                '{"name":"A","email":"%s","password":"%s","extra":%s}' % (email, PASSWORD, value))


@pytest.mark.parametrize(("kind", "value"), [("number", "1e309"), ("number", "-1e309"), ("number[]", "[1, 1e309]")])
def test_an_overflowing_number_does_not_tell_whether_an_address_is_taken(configure, make_user, kind, value):
    from tests.conftest import ApiClient

    configure(user={"additional_fields": {"extra": {"type": kind}}},
              email_and_password={"require_email_verification": True})
    make_user(email="victim@example.com")
    taken = _sign_up(ApiClient(), "victim@example.com", value)
    free = _sign_up(ApiClient(), "nobody@example.com", value)
    assert taken.status_code == free.status_code, (taken.content, free.content)
    for response in (taken, free):
        json.loads(response.content, parse_constant=lambda name: pytest.fail(f"{name} in {response.content!r}"))
    # Not the lie that the fresh address exists.
    assert b"USER_ALREADY_EXISTS" not in free.content


@pytest.mark.parametrize(("kind", "value"), [("number", "1e309"), ("number[]", "[-1e309]")])
def test_an_overflowing_number_in_update_user_is_a_400_not_a_500(configure, signed_in, kind, value):
    configure(user={"additional_fields": {"extra": {"type": kind}}})
    response = _raw(signed_in, "/update-user", '{"extra":%s}' % value)
    assert response.status_code == 400, response.content
