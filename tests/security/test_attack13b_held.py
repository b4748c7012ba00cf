"""Attacks 13b on additional user fields, the auth.User mapping and the made-up user that held.

Kept as regression tests: each one is an attack that failed against the current code.
"""

import copy
import json

import pytest
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.test import RequestFactory

from authservice import auth, users
from authservice.middleware import AuthSessionMiddleware
from authservice.models import AuthProfile
from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db

PRIVILEGED = {"emailVerified": True, "email_verified": True, "is_staff": True, "isStaff": True,
              "is_superuser": True, "isSuperuser": True, "is_active": False, "password": "x" * 20, "id": "admin",
              "__proto__": {"isStaff": True}, "constructor": {"prototype": {"role": "admin"}},
              "role": "admin", "createdAt": "2000-01-01T00:00:00Z", "auth_profile": 1, "data": {"role": "admin"},
              "i\u0455Staff": True, "\uff49s_staff": True, "x" * 10000: "y"}
FIELDS = {"nickname": {"type": "string"},
          "role": {"type": "string", "input": False, "default_value": "user"},
          "secretScore": {"type": "number", "returned": False, "default_value": 42},
          "internalNote": {"type": "string", "input": False, "returned": False, "default_value": "hidden"}}


def _stored(email="ada@example.com"):
    user = users.find_by_email(email)
    return user, (AuthProfile.objects.filter(user=user).values_list("data", flat=True).first() or {})


def _assert_unprivileged(user):
    assert not getattr(user, "is_staff", False) and not getattr(user, "is_superuser", False)
    assert user.is_active and not users.is_email_verified(user)


def test_sign_up_ignores_privileged_and_lookalike_keys(configure):
    configure(user={"additional_fields": FIELDS})
    response = ApiClient().api_post("/sign-up/email", {"name": "A", "email": "ada@example.com", "password": PASSWORD,
                                                       **{k: v for k, v in PRIVILEGED.items() if k not in ("role", "password")}})
    assert response.status_code == 200, response.content
    user, data = _stored()
    _assert_unprivileged(user)
    assert user.pk != "admin" and user.check_password(PASSWORD)
    assert data.get("role") == "user" and set(data) <= {"role", "secret_score", "internal_note", "nickname"}


def test_update_user_ignores_privileged_keys_and_refuses_input_false(configure, signed_in):
    configure(user={"additional_fields": FIELDS})
    response = signed_in.api_post("/update-user", {"nickname": "n", **{k: v for k, v in PRIVILEGED.items() if k != "role"}})
    assert response.status_code == 200, response.content
    for value in ("admin", ["admin"], {"a": 1}, 1, True):
        response = signed_in.api_post("/update-user", {"role": value})
        assert response.status_code == 400, (value, response.content)
    user, data = _stored()
    _assert_unprivileged(user)
    assert data.get("role") in (None, "user")


def test_input_false_holds_in_process_too(configure, signed_in):
    configure(user={"additional_fields": FIELDS})
    headers = {"cookie": f"auth.session_token={signed_in.cookies['auth.session_token'].value}"}
    result = auth.api.update_user(body={"role": "admin", "internalNote": "x"}, headers=headers, as_response=True)
    assert result.status_code == 400
    assert _stored()[1].get("role") in (None, "user")


def test_returned_false_never_leaves(configure, make_user):
    configure(user={"additional_fields": FIELDS})
    make_user(email="victim@example.com")
    client = ApiClient()
    answers = [client.api_post("/sign-up/email", {"name": "A", "email": "ada@example.com", "password": PASSWORD})]
    answers.append(client.api_get("/get-session"))
    answers.append(ApiClient().api_post("/sign-in/email", {"email": "ada@example.com", "password": PASSWORD}))
    answers.append(client.api_post("/update-user", {"secretScore": "not a number"}))
    schemas = client.api_get("/openapi.json").json()["components"]["schemas"]
    # Documented as an input where clients may set it; never in the User record that answers carry.
    assert "secretScore" not in json.dumps(schemas["User"]) and "internalNote" not in json.dumps(schemas)
    configure(email_and_password={"require_email_verification": True})
    answers.append(ApiClient().api_post("/sign-up/email", {"name": "A", "email": "victim@example.com",
                                                           "password": PASSWORD}))
    for response in answers:
        text = response.content.decode()
        assert "secretScore" not in text.replace("[body.secretScore]", "") and "internalNote" not in text, text[:500]
        assert "hidden" not in text


def test_string_and_number_edge_values_do_not_500(configure, signed_in):
    configure(user={"additional_fields": {"n": {"type": "number"}, "s": {"type": "string"},
                                          "l": {"type": "number[]"}, "b": {"type": "boolean"}}})
    for body in ({"n": -0.0}, {"n": 10 ** 300}, {"n": 2 ** 63}, {"s": {"a": 1}}, {"s": ["a"]}, {"b": "true"},
                 {"l": [0] * 20000}, {"s": "\ud7ff" * 1000}, {"n": None}, {"s": None}):
        response = signed_in.api_post("/update-user", body)
        assert response.status_code in (200, 400), (body, response.content)
    raw = signed_in.generic("POST", "/api/auth/update-user", '{"n": NaN}', content_type="application/json",
                            HTTP_ORIGIN="http://127.0.0.1:8000")
    assert raw.status_code == 400


def test_made_up_user_has_the_same_keys_defaults_and_headers(configure, make_user):
    configure(user={"additional_fields": FIELDS}, email_and_password={"require_email_verification": True})
    make_user(email="victim@example.com")
    body = {"name": "Ada", "password": PASSWORD, "nickname": "n"}
    taken = ApiClient().api_post("/sign-up/email", {**body, "email": "victim@example.com"})
    free = ApiClient().api_post("/sign-up/email", {**body, "email": "fresh@example.com"})
    assert taken.status_code == free.status_code == 200
    a, b = taken.json()["user"], free.json()["user"]
    assert set(a) == set(b) and type(a["id"]) is type(b["id"]) and len(a["id"]) == len(b["id"])
    assert {k: a[k] for k in a if k not in ("id", "email", "createdAt", "updatedAt")} == \
        {k: b[k] for k in b if k not in ("id", "email", "createdAt", "updatedAt")}
    assert sorted(k for k, _ in taken.items() if k != "Content-Length") == \
        sorted(k for k, _ in free.items() if k != "Content-Length")
    assert not taken.cookies and not free.cookies


def test_a_username_that_equals_the_address_in_another_case_is_not_claimed(make_user):
    model = get_user_model()
    if model.USERNAME_FIELD == users.email_field():
        pytest.skip("the e-mail is the username")
    existing = model._default_manager.create(**{model.USERNAME_FIELD: "Boss@Example.com",
                                                users.email_field(): "boss@personal.example"})
    response = ApiClient().api_post("/sign-up/email", {"name": "A", "email": "boss@example.com", "password": PASSWORD})
    assert response.status_code == 200
    new = users.find_by_email("boss@example.com")
    assert new.pk != existing.pk and new.get_username().lower() != "boss@example.com"


def test_a_copied_request_keeps_the_user(signed_in):
    cookie = signed_in.cookies["auth.session_token"].value
    request = RequestFactory().get("/me/", HTTP_COOKIE=f"auth.session_token={cookie}")
    seen = {}

    def view(req):
        seen["copy"] = copy.copy(req).user.pk
        seen["user"] = req.user.pk
        return HttpResponse("ok")

    AuthSessionMiddleware(view)(request)
    assert seen == {"copy": signed_in.user.pk, "user": signed_in.user.pk}


def test_me_is_the_cookie_user_over_a_django_admin_session(client, signed_in, make_user):
    admin = make_user(email="admin@example.com")
    client.force_login(admin)
    client.cookies["auth.session_token"] = signed_in.cookies["auth.session_token"].value
    response = client.get("/me/")
    assert response.status_code == 200 and json.loads(response.content)["email"] == signed_in.user.email
