"""Rate limits (core.md §8, D7, D8, D9, D12), in both storages. Time is moved, never slept."""

from datetime import timedelta

import pytest
from django.utils import timezone

from authservice import auth
from authservice.models import RateLimitCounter
from tests.conftest import PASSWORD, error_of

REDIS_URL = "redis://127.0.0.1:6379/15"


def _enable(storage, request, configure, settings):
    if storage == "cache":
        redis = pytest.importorskip("redis")
        client = redis.Redis.from_url(REDIS_URL)
        try:
            client.ping()
        except redis.exceptions.ConnectionError:
            pytest.skip("Redis is not running")
        client.flushdb()
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                       "LOCATION": REDIS_URL}}
        request.addfinalizer(client.flushdb)
    configure(rate_limit={"enabled": True, "storage": storage})
    return storage


@pytest.fixture(params=["database", "cache"])
def limited(request, configure, settings, db):
    """Rate limiting on, with counters in the database or in Redis."""
    return _enable(request.param, request, configure, settings)


@pytest.fixture
def limited_in_cache(request, configure, settings, db):
    return _enable("cache", request, configure, settings)


@pytest.fixture
def limited_in_database(request, configure, settings, db):
    return _enable("database", request, configure, settings)


def sign_in(api, **extra):
    return api.api_post("/sign-in/email", {"email": "ada@example.com", "password": PASSWORD}, **extra)


def expire_windows(storage):
    """What the passing of a window does to the stored counters."""
    if storage == "database":
        RateLimitCounter.objects.update(reset_at=timezone.now() - timedelta(seconds=1))
    else:
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()


# --- the strict rule ---------------------------------------------------------------------------
def test_the_fourth_sign_in_within_10_seconds_is_429(api, user, limited):
    for _ in range(3):
        assert sign_in(api).status_code == 200
    response = sign_in(api)
    assert response.status_code == 429
    assert response["Content-Type"] == "application/json"
    assert error_of(response) == {"message": "Too many requests. Please try again later.",
                                  "code": "TOO_MANY_REQUESTS", "status": 429}


def test_a_429_carries_retry_after_and_x_retry_after(api, user, limited):
    for _ in range(3):
        sign_in(api)
    response = sign_in(api)
    assert response["Retry-After"] == response["X-Retry-After"]
    assert 1 <= int(response["Retry-After"]) <= 10


def test_failed_sign_ins_count_too(api, user, limited):
    for _ in range(3):
        assert api.api_post("/sign-in/email", {"email": "ada@example.com", "password": "no"}
                            ).status_code == 401
    assert sign_in(api).status_code == 429


def test_the_limit_is_per_client_ip(api, user, limited):
    for _ in range(4):
        sign_in(api, REMOTE_ADDR="10.0.0.1")
    assert sign_in(api, REMOTE_ADDR="10.0.0.1").status_code == 429
    assert sign_in(api, REMOTE_ADDR="10.0.0.2").status_code == 200


def test_the_limit_is_per_path(api, user, limited):
    for _ in range(4):
        sign_in(api)
    response = api.api_post("/sign-up/email", {"name": "B", "email": "b@example.com", "password": PASSWORD})
    assert response.status_code == 200


def test_the_window_passing_opens_the_door_again(api, user, limited):
    for _ in range(4):
        sign_in(api)
    assert sign_in(api).status_code == 429
    expire_windows(limited)
    assert sign_in(api).status_code == 200


@pytest.mark.parametrize("path", ["/sign-up/email", "/change-password", "/change-email",
                                  "/sign-in/social"])
def test_the_strict_rule_covers_its_prefixes(api, db, limited, path):
    for _ in range(3):
        assert api.api_post(path, {}).status_code != 429
    assert api.api_post(path, {}).status_code == 429


def test_a_blocked_request_does_not_reach_the_endpoint(api, user, limited):
    from authservice.models import Session

    for _ in range(3):
        sign_in(api)
    sign_in(api)
    assert Session.objects.count() == 3


# --- the mail rule -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/request-password-reset", "/send-verification-email",
                                  "/forget-password"])
def test_mail_endpoints_allow_three_per_60_seconds(api, db, limited, path):
    for _ in range(3):
        assert api.api_post(path, {"email": "a@example.com"}).status_code != 429
    response = api.api_post(path, {"email": "a@example.com"})
    assert response.status_code == 429
    assert 10 < int(response["Retry-After"]) <= 60


# --- the default rule --------------------------------------------------------------------------
def test_the_default_rule_allows_100_per_10_seconds(api, db, limited):
    for _ in range(100):
        assert api.api_get("/ok").status_code == 200
    response = api.api_get("/ok")
    assert response.status_code == 429
    assert error_of(response)["code"] == "TOO_MANY_REQUESTS"


def test_unknown_paths_are_counted_too(api, db, configure, limited):
    configure(rate_limit={"max": 2})
    assert api.api_get("/nope").status_code == 404
    assert api.api_get("/nope").status_code == 404
    assert api.api_get("/nope").status_code == 429


def test_trailing_slashes_share_the_bucket_of_the_path(api, db, configure, limited):
    configure(rate_limit={"max": 2})
    api.api_get("/ok")
    api.api_get("/ok/")
    assert api.api_get("/ok").status_code == 429


def test_window_and_max_are_settings(api, db, configure, limited):
    configure(rate_limit={"window": 60, "max": 1})
    api.api_get("/ok")
    response = api.api_get("/ok")
    assert response.status_code == 429
    assert 10 < int(response["Retry-After"]) <= 60


# --- custom rules ------------------------------------------------------------------------------
def test_a_custom_rule_false_switches_limiting_off_for_a_path(api, user, configure, limited):
    configure(rate_limit={"custom_rules": {"/sign-in/email": False}})
    for _ in range(6):
        assert sign_in(api).status_code == 200


def test_a_custom_rule_sets_window_and_max(api, db, configure, limited):
    configure(rate_limit={"custom_rules": {"/ok": {"window": 30, "max": 2}}})
    assert api.api_get("/ok").status_code == 200
    assert api.api_get("/ok").status_code == 200
    assert api.api_get("/ok").status_code == 429


def test_a_custom_rule_may_be_a_glob(api, user, configure, limited):
    configure(rate_limit={"custom_rules": {"/sign-in/*": False}})
    for _ in range(5):
        assert sign_in(api).status_code == 200


def test_rate_limiting_can_be_switched_off(api, user, configure, limited):
    configure(rate_limit={"enabled": False})
    for _ in range(6):
        assert sign_in(api).status_code == 200


def test_rate_limiting_is_on_by_default():
    from authservice.app_settings import DEFAULTS

    assert DEFAULTS["rate_limit"]["enabled"] is True


# --- the client address [D9] -------------------------------------------------------------------
def test_forwarded_for_is_ignored_without_ip_address_header(api, user, limited):
    for index in range(3):
        sign_in(api, HTTP_X_FORWARDED_FOR=f"203.0.113.{index}")
    assert sign_in(api, HTTP_X_FORWARDED_FOR="203.0.113.99").status_code == 429


def test_ip_address_header_uses_the_rightmost_value(api, user, configure, limited):
    configure(ip_address_header="X-Forwarded-For")
    for index in range(3):
        # A client cannot pick its bucket by writing the left of the header.
        sign_in(api, HTTP_X_FORWARDED_FOR=f"198.51.100.{index}, 203.0.113.7")
    assert sign_in(api, HTTP_X_FORWARDED_FOR="198.51.100.50, 203.0.113.7").status_code == 429
    assert sign_in(api, HTTP_X_FORWARDED_FOR="203.0.113.8").status_code == 200


def test_ip_address_header_separates_clients_behind_one_proxy(api, user, configure, limited):
    configure(ip_address_header="X-Forwarded-For")
    for _ in range(3):
        sign_in(api, HTTP_X_FORWARDED_FOR="203.0.113.7", REMOTE_ADDR="10.0.0.1")
    assert sign_in(api, HTTP_X_FORWARDED_FOR="203.0.113.7", REMOTE_ADDR="10.0.0.1").status_code == 429
    assert sign_in(api, HTTP_X_FORWARDED_FOR="203.0.113.8", REMOTE_ADDR="10.0.0.1").status_code == 200


def test_trusted_proxy_count_picks_the_hop_from_the_right(api, user, configure, limited):
    configure(ip_address_header="X-Forwarded-For", trusted_proxy_count=2)
    for index in range(3):
        sign_in(api, HTTP_X_FORWARDED_FOR=f"198.51.100.{index}, 203.0.113.7, 10.0.0.9")
    assert sign_in(api, HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.7, 10.0.0.8").status_code == 429
    assert sign_in(api, HTTP_X_FORWARDED_FOR="203.0.113.9, 10.0.0.9").status_code == 200


def test_a_missing_or_garbage_header_falls_back_to_remote_addr(api, user, configure, limited):
    configure(ip_address_header="X-Forwarded-For")
    sign_in(api, REMOTE_ADDR="10.0.0.5")
    sign_in(api, REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="not-an-ip")
    sign_in(api, REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="")
    assert sign_in(api, REMOTE_ADDR="10.0.0.5").status_code == 429


def test_ipv6_clients_share_the_bucket_of_their_64(api, user, limited):
    for suffix in ("1", "2", "3"):
        sign_in(api, REMOTE_ADDR=f"2001:db8:1:2::{suffix}")
    assert sign_in(api, REMOTE_ADDR="2001:db8:1:2::ffff").status_code == 429
    assert sign_in(api, REMOTE_ADDR="2001:db8:1:3::1").status_code == 200


def test_ipv4_mapped_ipv6_shares_the_ipv4_bucket(api, user, limited):
    for _ in range(3):
        sign_in(api, REMOTE_ADDR="10.0.0.7")
    assert sign_in(api, REMOTE_ADDR="::ffff:10.0.0.7").status_code == 429


def test_the_header_address_is_also_the_sessions_ip(api, user, configure):
    from authservice.models import Session

    configure(ip_address_header="X-Forwarded-For")
    token = sign_in(api, HTTP_X_FORWARDED_FOR="1.1.1.1, 203.0.113.7").json()["token"]
    assert Session.objects.get(token=token).ip_address == "203.0.113.7"


# --- in-process calls --------------------------------------------------------------------------
def test_in_process_calls_are_never_limited(user, limited):
    for _ in range(10):
        result = auth.api.sign_in_email(body={"email": "ada@example.com", "password": PASSWORD})
        assert result["token"]


def test_the_cache_store_expires_its_counters_with_the_window(api, user, limited_in_cache):
    import redis

    sign_in(api)
    client = redis.Redis.from_url(REDIS_URL)
    ttls = [client.ttl(key) for key in client.keys("*")]
    assert ttls and all(0 < ttl <= 10 for ttl in ttls)


def test_the_database_store_keeps_one_row_per_ip_and_path(api, user, limited_in_database):
    sign_in(api)
    sign_in(api)
    api.api_get("/ok")
    assert RateLimitCounter.objects.count() == 2
