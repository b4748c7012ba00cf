"""Rate limits by client IP and path, counted where every server process sees them (core.md §8, [D8]).

A fixed window from the first hit: the first request opens a window of ``window`` seconds; the
``max``-th request is the last one allowed in it. Counters live in the database (default) or in
Django's cache (``rate_limit.storage = "cache"``, for Redis).
"""

import fnmatch
import hashlib
import math
import time
from datetime import timedelta

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from authservice import app_settings
from authservice.api.context import client_ip
from authservice.errors import APIError, codes

STRICT_PREFIXES = ("/sign-in", "/sign-up", "/change-password", "/change-email")
MAIL_PATHS = ("/request-password-reset", "/send-verification-email")

_plugin_rules = []  # (predicate(path), window, max), added by plugins


def add_rule(predicate, window, max_requests):
    _plugin_rules.append((predicate, window, max_requests))


def rule_for(path):
    """``(window, max)`` for a path relative to the base path, or ``None`` when not limited."""
    settings = app_settings.rate_limit
    rule = (settings.window, settings.max)
    if path.startswith(STRICT_PREFIXES):
        rule = (10, 3)
    elif path in MAIL_PATHS or path.startswith("/forget-password"):
        rule = (60, 3)
    for predicate, window, max_requests in _plugin_rules:
        if predicate(path):
            rule = (window, max_requests)
    for pattern, custom in settings.custom_rules.items():
        if path == pattern or fnmatch.fnmatchcase(path, pattern):
            rule = None if custom is False else (custom["window"], custom["max"])
    return rule


def check(request, subpath):
    path = subpath.rstrip("/") or "/"
    rule = rule_for(path)
    if rule is None:
        return
    window, max_requests = rule
    ip = client_ip(request.headers, request.META.get("REMOTE_ADDR"))
    retry_after = hit(f"{ip}|{path}", window, max_requests)
    if retry_after is not None:
        seconds = str(max(1, retry_after))
        raise APIError(429, codes.TOO_MANY_REQUESTS,
                       headers={"Retry-After": seconds, "X-Retry-After": seconds})


def hit(name, window, max_requests):
    """Count one use of ``name`` in its fixed window: seconds to wait when over ``max_requests``, else ``None``.

    The store of every rule (database or cache), for counters keyed by something else than IP and path.
    """
    # Hashed: the path is client-chosen and may be long; the key must fit the store.
    key = "authservice:rl:" + hashlib.sha256(name.encode()).hexdigest()[:40]
    store = _cache_hit if app_settings.rate_limit.storage == "cache" else _database_hit
    return store(key, window, max_requests)


def _cache_hit(key, window, max_requests):
    """Seconds to wait when blocked, else ``None``. ``add`` + ``incr`` are atomic in Redis."""
    now = time.time()
    if cache.add(key, 1, timeout=window):
        cache.set(key + ":t", now + window, timeout=window)
        return None
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr: this request opens a new window
        cache.set(key, 1, timeout=window)
        cache.set(key + ":t", now + window, timeout=window)
        return None
    if count <= max_requests:
        return None
    reset_at = cache.get(key + ":t") or now + window
    return math.ceil(reset_at - now)


def _database_hit(key, window, max_requests):
    from authservice.models import RateLimitCounter

    now = timezone.now()
    # Count only within a live window; an expired row is restarted by the first request after it.
    if RateLimitCounter.objects.filter(key=key, reset_at__gt=now).update(count=F("count") + 1):
        row = RateLimitCounter.objects.filter(key=key).values("count", "reset_at").first()
        if row and row["count"] > max_requests:
            return math.ceil((row["reset_at"] - now).total_seconds())
        return None
    reset_at = now + timedelta(seconds=window)
    try:
        with transaction.atomic():
            RateLimitCounter.objects.update_or_create(key=key, defaults={"count": 1, "reset_at": reset_at})
    except IntegrityError:  # another process opened the window first: count in it
        return _database_hit(key, window, max_requests)
    return None
