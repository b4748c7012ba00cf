"""I4: every URL we store or return is http(s), and that includes the user's ``image``.

/update-user and /sign-up/email stored any string as ``image`` and get-session returned it, and a
social or SSO provider's ``picture`` claim was stored as sent, so ``javascript:`` and ``data:`` URLs
reached every client that renders the avatar (``<a href={user.image}>``, an admin page linking it).
Now the API refuses them (400 VALIDATION_ERROR) and a provider's is dropped (stored as null): social and
SSO users are both made by authservice.flows.external_identity.create_user, tested here through a
social sign-in against a stub OpenID provider.
"""

import pytest
from django.contrib.auth import get_user_model

from tests.conftest import PASSWORD, error_of
from tests.peers.social import _stub_server, corp, sign_in_with_corp, stub  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

ACTIVE = ["javascript:alert(document.domain)", "data:text/html,<script>alert(1)</script>",
          "JavaScript:alert(1)", "vbscript:msgbox(1)", "//evil.example/a.png", "/a.png"]


@pytest.mark.parametrize("image", ACTIVE)
def test_update_user_refuses_an_image_that_is_not_an_http_url(signed_in, image):
    response = signed_in.api_post("/update-user", {"image": image})
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert get_user_model().objects.get().image is None


def test_update_user_keeps_an_https_image(signed_in):
    signed_in.api_post("/update-user", {"image": "https://img.example.com/a.png"})
    assert signed_in.api_get("/get-session").json()["user"]["image"] == "https://img.example.com/a.png"


@pytest.mark.parametrize("image", ACTIVE)
def test_sign_up_refuses_an_image_that_is_not_an_http_url(api, image):
    response = api.api_post("/sign-up/email", {"email": "x@example.com", "password": PASSWORD,
                                               "name": "X", "image": image})
    assert response.status_code == 400
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("picture", ACTIVE)
def test_a_provider_picture_that_is_not_an_http_url_is_dropped(api, corp, picture):  # noqa: F811
    response = sign_in_with_corp(api, corp, sub="sub-ada", picture=picture)
    assert response.status_code == 302 and "error" not in response["Location"]
    assert get_user_model().objects.get().image is None
    assert api.api_get("/get-session").json()["user"]["image"] is None


def test_a_provider_https_picture_is_kept(api, corp):  # noqa: F811
    sign_in_with_corp(api, corp, sub="sub-ada", picture="https://idp.example.com/p.png")
    assert get_user_model().objects.get().image == "https://idp.example.com/p.png"
