"""Migration 0004_domains: the per-domain state starts from what the provider had (issue 14 §3)."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from authservice.models import Verification

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(settings.AUTH_USER_MODEL != "authservice.User", reason="authservice.User only")]
BEFORE, AFTER = [("sso", "0003_provider_domain_index")], [("sso", "0004_domains")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _provider(apps, user, provider_id, verified):
    provider = apps.get_model("sso", "SsoProvider").objects.create(
        provider_id=provider_id, issuer="https://idp", domain="corp.com,corp.de", user_id=user.pk,
        domain_verified=verified)
    for host in ("corp.com", "corp.de"):
        apps.get_model("sso", "SsoProviderDomain").objects.create(provider=provider, domain=host)
    return provider


def test_a_verified_provider_has_every_domain_verified_and_a_pending_token_is_each_domains():
    old = _migrate(BEFORE)
    # Only sso goes back: the core's tables stay at their latest, so its current models write them.
    user = get_user_model().objects.create(email="owner@corp.com")
    verified = _provider(old, user, "done", True)
    pending = _provider(old, user, "todo", False)
    expires = timezone.now() + timedelta(days=3)
    Verification.objects.create(identifier="_auth-token-todo", value="tok-123", expires_at=expires)
    try:
        new = _migrate(AFTER)
        rows = new.get_model("sso", "SsoProviderDomain").objects
        assert set(rows.filter(provider_id=verified.pk).values_list("status", flat=True)) == {"verified"}
        assert all(row.verified_at is not None for row in rows.filter(provider_id=verified.pk))
        todo = list(rows.filter(provider_id=pending.pk))
        assert {(row.status, row.token) for row in todo} == {("pending", "tok-123")}
        assert all(abs((row.token_expires_at - expires).total_seconds()) < 1 for row in todo)
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
