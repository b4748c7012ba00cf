"""Attack 13b: a ``date`` additional field whose value leaves datetime's range once converted to UTC.

``inputs.DateTime`` accepts ``9999-12-31T23:59:59-01:00`` and ``0001-01-01T00:00:00+01:00`` (valid
aware datetimes), but ``wire.iso`` (storage in ``AuthProfile.data``, and every answer) calls
``astimezone(utc)``, which raises OverflowError: sign-up and update-user are 500s (I4), and a user
whose model column holds such a value would break every answer that carries it.

Fix at the mechanism: ``inputs.DateTime`` converts to UTC inside its ``try`` and refuses what
overflows (400 VALIDATION_ERROR), so no datetime the wire cannot render is ever accepted.
"""

import pytest

from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db

EDGES = ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59.999999-00:01"]


@pytest.mark.parametrize("value", EDGES)
def test_a_date_out_of_range_in_utc_is_refused_at_sign_up(configure, value):
    configure(user={"additional_fields": {"birthday": {"type": "date"}}})
    response = ApiClient().api_post("/sign-up/email", {"name": "A", "email": "a@example.com", "password": PASSWORD,
                                                       "birthday": value})
    assert response.status_code == 400, response.content


@pytest.mark.parametrize("value", EDGES)
def test_a_date_out_of_range_in_utc_is_refused_by_update_user(configure, signed_in, value):
    configure(user={"additional_fields": {"birthday": {"type": "date"}}})
    response = signed_in.api_post("/update-user", {"birthday": value})
    assert response.status_code == 400, response.content


@pytest.mark.parametrize("value", EDGES)
def test_a_date_out_of_range_does_not_500_the_made_up_user(configure, make_user, value):
    configure(user={"additional_fields": {"birthday": {"type": "date"}}},
              email_and_password={"require_email_verification": True})
    make_user(email="victim@example.com")
    response = ApiClient().api_post("/sign-up/email", {"name": "A", "email": "victim@example.com",
                                                       "password": PASSWORD, "birthday": value})
    assert response.status_code == 400, response.content
