"""``manage.py two_factor_reencrypt``: re-encrypt every TOTP secret under the current secret.

The step of a secret rotation (docs/mfa.md): set the new secret, list the old one in
``AUTHSERVICE["two_factor"]["secret_fallbacks"]``, run this, then remove the old one.
"""

from cryptography.fernet import InvalidToken
from django.core.management.base import BaseCommand

from authservice.models import TwoFactor
from authservice.two_factor import crypto


class Command(BaseCommand):
    help = "Re-encrypt stored TOTP secrets under the current secret (after a secret rotation)."

    def handle(self, *args, **options):
        done = unreadable = 0
        for factor in TwoFactor.objects.only("pk", "secret").iterator():
            try:
                rotated = crypto.reencrypt(factor.secret)
            except InvalidToken:
                unreadable += 1
                continue
            TwoFactor.objects.filter(pk=factor.pk, secret=factor.secret).update(secret=rotated)
            done += 1
        self.stdout.write(f"Re-encrypted {done} TOTP secret(s); {unreadable} left that no configured secret opens.")
        if unreadable:
            self.stderr.write("Those users need `manage.py mfa_reset <email>` (or the missing old secret in "
                              "two_factor.secret_fallbacks).")
