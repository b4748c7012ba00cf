"""two_factor.required_for: users it names must enrol a second factor before anything else answers them.

A password sign-in of such a user still opens a session (they need one to enrol), but every endpoint
outside the enrolment allow-list answers 403 TWO_FACTOR_ENROLLMENT_REQUIRED until twoFactorEnabled.
"""

import pytest

from authservice.models import Passkey, Session
from tests.conftest import PASSWORD, error_of
from tests.two_factor_support import (  # noqa: F401 - fixtures
    code, enrol, has_field, password_sign_in, pending, secret_of, staff, staff_required, start_sign_in,
)

pytestmark = pytest.mark.django_db

REFUSED = "TWO_FACTOR_ENROLLMENT_REQUIRED"


def is_refused(response):
    return response.status_code == 403 and error_of(response)["code"] == REFUSED


def requires_a_s(user):
    """A required_for callable: users whose e-mail starts with "a"."""
    return user.email.startswith("a")


# --- who it applies to ---------------------------------------------------------------------------
def test_a_named_user_without_a_second_factor_is_refused_with_enrollment_required(pending):
    assert is_refused(pending.api_get("/list-sessions"))


def test_a_user_the_setting_does_not_name_is_not_refused(make_user, staff_required):
    make_user(email="bob@example.com")
    assert password_sign_in("bob@example.com").api_get("/list-sessions").status_code == 200


def test_without_required_for_a_staff_user_is_not_refused(make_user):
    if not has_field("is_staff"):
        pytest.skip("the user model has no staff flag")
    make_user(email="staff@example.com", is_staff=True)
    assert password_sign_in("staff@example.com").api_get("/list-sessions").status_code == 200


def test_any_one_of_the_listed_attributes_applies(make_user, staff_required):
    if not has_field("is_superuser"):
        pytest.skip("the user model has no superuser flag")
    make_user(email="root@example.com", is_superuser=True)
    assert is_refused(password_sign_in("root@example.com").api_get("/list-sessions"))


def test_a_dotted_path_callable_decides(make_user, configure):
    configure(two_factor={"required_for": f"{__name__}.requires_a_s"})
    make_user(email="ada@example.com")
    make_user(email="bob@example.com")
    assert is_refused(password_sign_in("ada@example.com").api_get("/list-sessions"))
    assert password_sign_in("bob@example.com").api_get("/list-sessions").status_code == 200


def test_the_policy_is_off_while_two_factor_is_off(staff, configure):
    configure(two_factor={"enabled": False})
    assert password_sign_in(staff.email).api_get("/list-sessions").status_code == 200


# --- what a pending session may still do -----------------------------------------------------------
def test_get_session_answers_a_pending_session(pending):
    assert pending.api_get("/get-session").json()["user"]["email"] == pending.user.email


def test_get_session_says_the_session_is_pending(pending):
    assert pending.api_get("/get-session").json()["session"]["twoFactorEnrollmentRequired"] is True


def test_get_session_drops_the_flag_once_enrolled(pending):
    pending.api_post("/two-factor/enable", {"password": PASSWORD, "method": "otp"})
    assert "twoFactorEnrollmentRequired" not in pending.api_get("/get-session").json()["session"]


def test_sign_out_ends_a_pending_session(pending):
    assert pending.api_post("/sign-out").status_code == 200
    assert not Session.objects.filter(user=pending.user).exists()


def test_enable_and_a_first_totp_code_finish_enrolment(pending):
    enrol(pending)
    assert pending.api_get("/list-sessions").status_code == 200


def test_get_totp_uri_works_during_enrolment(pending):
    enabled = pending.api_post("/two-factor/enable", {"password": PASSWORD}).json()
    response = pending.api_post("/two-factor/get-totp-uri", {"password": PASSWORD})
    assert secret_of(response.json()["totpURI"]) == secret_of(enabled["totpURI"])


def test_enabling_email_codes_finishes_enrolment(pending):
    assert pending.api_post("/two-factor/enable", {"password": PASSWORD, "method": "otp"}).status_code == 200
    assert pending.api_get("/list-sessions").status_code == 200


def test_enable_without_a_first_code_does_not_finish_enrolment(pending):
    pending.api_post("/two-factor/enable", {"password": PASSWORD})
    assert is_refused(pending.api_get("/list-sessions"))


def test_a_passkey_does_not_satisfy_required_for(pending):
    Passkey.objects.create(user=pending.user, credential_id="cred-1", public_key="", counter=0,
                           device_type="singleDevice", backed_up=False)
    assert is_refused(pending.api_get("/list-sessions"))


def test_once_enrolled_the_next_sign_in_asks_for_the_second_factor(pending):
    secret, _ = enrol(pending)
    client = start_sign_in(pending.user.email)
    assert client.api_post("/two-factor/verify-totp", {"code": code(secret)}).status_code == 200
    assert client.api_get("/list-sessions").status_code == 200


# --- how sessions were made ----------------------------------------------------------------------
def test_a_password_sign_in_records_its_method(pending):
    assert Session.objects.get(user=pending.user).sign_in_method == "password"


def test_a_two_factor_sign_in_records_its_method(pending):
    secret, _ = enrol(pending)
    client = start_sign_in(pending.user.email)
    token = client.api_post("/two-factor/verify-totp", {"code": code(secret)}).json()["token"]
    assert Session.objects.get(token=token).sign_in_method == "two_factor"


def test_a_session_made_before_methods_were_recorded_is_not_exempt(pending):
    Session.objects.filter(user=pending.user).update(sign_in_method="")
    assert is_refused(pending.api_get("/list-sessions"))


def test_create_session_needs_the_method():
    from authservice.api.context import Context
    from authservice.flows import sessions

    with pytest.raises(TypeError):
        sessions.create_session(Context(None, headers={}), object())  # type: ignore[call-arg]
