"""I6: no unauthenticated request costs more than its size justifies.

``POST /sign-in/sso`` routes by a ``domain`` or an e-mail that anyone can send. A hostname has natural
bounds (253 characters, labels of 1-63, IDNA), an e-mail address 254; past them the request is
refused with a 400 and a stable code before the database is touched. A valid name is matched by one
indexed query (``domain IN`` its at most 127 suffixes), never by one ``LIKE`` per suffix: that once made
a 31 KiB body cost 7-10 s and 1.6 GB in a worker (issue 12, F3). Time is not asserted here; the query
count and the SQL are, and ``bench/abuse.py`` measures CPU and memory.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sso import signin
from tests.conftest import error_of
from tests.sso.conftest import _sso_defaults, configure_sso  # noqa: F401 - fixtures
from tests.sso.conftest_oidc import make_provider  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

IDP = "https://idp.example.net"
DEEPEST_VALID = "a." * 121 + "bb.corp.com"  # 253 characters, 124 labels


def sign_in(api, **body):
    return api.api_post("/sign-in/sso", {"callbackURL": "/dashboard", **body})


@pytest.fixture
def corp(make_provider):
    config = {"issuer": IDP, "clientId": "corp-client", "clientSecret": "s",
              "authorizationEndpoint": f"{IDP}/authorize", "tokenEndpoint": f"{IDP}/token",
              "jwksEndpoint": f"{IDP}/jwks", "tokenEndpointAuthentication": "client_secret_basic"}
    return make_provider("corp", IDP, config, domain="corp.com", domain_verified=True)


@pytest.mark.parametrize("domain", [
    pytest.param("a." * 15_872 + "com", id="31 KiB of one-letter labels"),
    pytest.param("a" * 31_744 + ".com", id="31 KiB in one label"),
    pytest.param("a." * 127 + "com", id="257 characters"),
    pytest.param("a" * 64 + ".corp.com", id="a 64-character label"),
    pytest.param("corp..com", id="an empty label"),
    pytest.param("corp.com/x", id="a path"),
    pytest.param("exa mple.corp.com", id="a space"),
    pytest.param("_x.corp.com", id="an underscore"),
    pytest.param("xn--zz.corp.com", id="an invalid A-label"),
])
def test_a_domain_that_is_no_hostname_is_400_before_any_query(api, corp, domain, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = sign_in(api, domain=domain)
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_DOMAIN"


@pytest.mark.parametrize("email", [
    pytest.param("a" * 31_000 + "@corp.com", id="31 KiB local part"),
    pytest.param("a" * 246 + "@corp.com", id="255 characters"),
    pytest.param("ada@" + "a." * 15_000 + "corp.com", id="30 KiB domain"),
    pytest.param("ada@" + "a" * 64 + ".corp.com", id="a 64-character label"),
    pytest.param("ada@corp..com", id="an empty label"),
])
def test_an_email_past_its_bounds_is_400_before_any_query(api, corp, email, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = sign_in(api, email=email)
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_EMAIL"


def test_an_over_long_domain_is_refused_even_beside_a_provider_id(api, corp, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = sign_in(api, providerId="corp", domain="a." * 15_872 + "com")
    assert error_of(response)["code"] == "INVALID_DOMAIN"


def test_the_deepest_valid_hostname_is_routed_by_one_indexed_query_without_like(corp):
    with CaptureQueriesContext(connection) as queries:
        assert signin.find_provider(domain=DEEPEST_VALID) == corp
    assert len(queries) == 1
    assert " LIKE " not in queries[0]["sql"].upper()
