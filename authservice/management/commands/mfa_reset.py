"""``manage.py mfa_reset <email>``: turn every second factor of a locked-out user off (logged)."""

from django.core.management.base import BaseCommand, CommandError

from authservice import users
from authservice.two_factor import reset


class Command(BaseCommand):
    help = ("Reset a user's multi-factor authentication: TOTP, backup codes, trusted devices and passkeys. "
            "Logged at WARNING on the 'authservice.mfa' logger.")

    def add_arguments(self, parser):
        parser.add_argument("email")

    def handle(self, *args, email, **options):
        user = users.find_by_email(email)
        if user is None:
            raise CommandError(f"No user with the e-mail address {email!r}.")
        reset.reset(user, by="manage.py mfa_reset")
        self.stdout.write(f"Multi-factor authentication reset for {users.email_of(user)}.")
