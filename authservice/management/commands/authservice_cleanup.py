"""Delete expired sessions, verification rows and rate-limit counters (run it from cron)."""

from django.core.management.base import BaseCommand
from django.utils import timezone

from authservice.models import RateLimitCounter, Session, Verification


class Command(BaseCommand):
    help = "Delete expired sessions, verification rows and rate-limit counters."

    def handle(self, *args, **options):
        now = timezone.now()
        for model, field in ((Session, "expires_at"), (Verification, "expires_at"),
                             (RateLimitCounter, "reset_at")):
            deleted, _ = model.objects.filter(**{f"{field}__lt": now}).delete()
            self.stdout.write(f"{model.__name__}: {deleted} expired rows deleted")
