"""Migration 0006: accounts verified before proof times were kept count as proven since they were created."""

import pytest
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(settings.AUTH_USER_MODEL != "authservice.User", reason="authservice.User only")]
BEFORE, AFTER = [("authservice", "0005_passkey")], [("authservice", "0006_email_proven")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_a_verified_account_is_proven_since_its_creation_and_an_unverified_one_is_not():
    old = _migrate(BEFORE).get_model("authservice", "User")
    verified = old.objects.create(email="ada@example.com", email_verified=True)
    unverified = old.objects.create(email="bob@example.com", email_verified=False)
    try:
        new = _migrate(AFTER).get_model("authservice", "User")
        assert new.objects.get(pk=verified.pk).email_verified_at == new.objects.get(pk=verified.pk).created_at
        assert new.objects.get(pk=unverified.pk).email_verified_at is None
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # every app back at its latest
