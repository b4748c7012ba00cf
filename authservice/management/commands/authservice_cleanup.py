"""Delete expired sessions, verification rows of every kind, pending two-factor sign-ins, trusted devices
and rate-limit counters (run it from cron)."""

from django.core.management.base import BaseCommand
from django.db import connections, transaction
from django.db.models import CASCADE, signals
from django.db.models.deletion import Collector
from django.utils import timezone

from authservice.models import RateLimitCounter, Session, TrustedDevice, TwoFactorChallenge, Verification

# Rows per DELETE: a backlog (passkey challenges asked for and never finished pile up at the rate of a
# bot's requests) is cleared in short statements that hold few locks, never one that holds them all.
BATCH = 5000
EXPIRING = (
    (Session, "expires_at"),
    # Reset, verification and deletion tokens, OAuth and SSO state, passkey challenges: one table.
    (Verification, "expires_at"),
    (TwoFactorChallenge, "expires_at"),
    (TrustedDevice, "expires_at"),
    (RateLimitCounter, "reset_at"),
)


def delete_expired(model, field, now, batch=BATCH):
    """Delete ``model``'s rows whose ``field`` is before ``now``, ``batch`` at a time; how many.

    Each batch is found by an index on ``field``, locked (``FOR UPDATE SKIP LOCKED`` where the database
    has it: two cleanups at once take different rows) and deleted in its own short transaction, so a
    backlog of 10^6 rows never holds more than ``batch`` row locks (bench/scaling.py measures it).
    """
    expired = model._base_manager.filter(**{f"{field}__lt": now})
    if connections[expired.db].features.has_select_for_update_skip_locked:
        expired = expired.select_for_update(skip_locked=True)
    total = 0
    while True:
        with transaction.atomic():
            keys = list(expired.values_list("pk", flat=True)[:batch])
            if not keys:
                return total
            total += delete_rows(model, keys, model._base_manager.filter(pk__in=keys, **{f"{field}__lt": now}))


def delete_rows(model, keys, rows):
    """Delete ``rows`` (the locked rows of primary keys ``keys``) and what cascades from them, one
    DELETE per table where possible.

    ``QuerySet.delete()`` loads every row of a model that others refer to (a session: sso's
    SessionOrganization) and deletes it 100 keys per statement: 30 s for 10^5 expired sessions. When no
    signal watches ``model`` and each table that cascades from it can itself go in one statement, the
    same rows go without being loaded: the cascading rows first (those pointing at ``keys``), then
    ``rows``. Anything else (a signal receiver, SET_NULL, a deeper cascade) keeps Django's delete.
    """
    collector = Collector(using=rows.db, origin=rows)
    if collector.can_fast_delete(rows):
        return rows._raw_delete(rows.db)
    if (signals.pre_delete.has_listeners(model) or signals.post_delete.has_listeners(model)
            or model._meta.local_many_to_many):
        return _django_delete(model, rows)
    cascades = []
    for relation in model._meta.related_objects:
        if (relation.many_to_many or relation.on_delete is not CASCADE
                or relation.field.target_field != model._meta.pk):
            return _django_delete(model, rows)
        dependent = relation.related_model._base_manager.filter(**{f"{relation.field.attname}__in": keys})
        if not collector.can_fast_delete(dependent):
            return _django_delete(model, rows)
        cascades.append(dependent)
    # _raw_delete: the one DELETE statement Django itself sends for a queryset it may fast-delete.
    for dependent in cascades:
        dependent._raw_delete(dependent.db)
    return rows._raw_delete(rows.db)


def _django_delete(model, rows):
    _, by_model = rows.delete()
    return by_model.get(model._meta.label, 0)


class Command(BaseCommand):
    help = "Delete expired sessions, verification rows, two-factor sign-ins, trusted devices and rate-limit counters."

    def handle(self, *args, **options):
        now = timezone.now()
        for model, field in EXPIRING:
            deleted = delete_expired(model, field, now)
            self.stdout.write(f"{model.__name__}: {deleted} expired rows deleted")
