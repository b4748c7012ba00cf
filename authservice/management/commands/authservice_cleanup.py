"""Delete expired sessions, verification rows of every kind, pending two-factor sign-ins, trusted devices
and rate-limit counters (run it from cron)."""

from django.core.management.base import BaseCommand
from django.db import transaction
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
    """Delete ``model``'s rows whose ``field`` is before ``now``, ``batch`` at a time; how many."""
    expired = model.objects.filter(**{f"{field}__lt": now})
    total = 0
    while True:
        with transaction.atomic():
            keys = list(expired.values_list("pk", flat=True)[:batch])
            if not keys:
                return total
            _, by_model = model.objects.filter(pk__in=keys, **{f"{field}__lt": now}).delete()
        total += by_model.get(model._meta.label, 0)


class Command(BaseCommand):
    help = "Delete expired sessions, verification rows, two-factor sign-ins, trusted devices and rate-limit counters."

    def handle(self, *args, **options):
        now = timezone.now()
        for model, field in EXPIRING:
            deleted = delete_expired(model, field, now)
            self.stdout.write(f"{model.__name__}: {deleted} expired rows deleted")
