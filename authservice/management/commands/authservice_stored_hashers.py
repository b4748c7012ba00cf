"""Which password hashers the stored hashes use, against PASSWORD_HASHERS.

Every sign-in runs each configured hasher once so that no stored hash shows in its timing (I7,
authservice/hashers.py): a hasher that no stored hash uses costs every sign-in for nothing, and can
be dropped from PASSWORD_HASHERS; a stored algorithm that is not configured cannot sign in at all.
"""

from collections import Counter

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX, get_hashers
from django.core.management.base import BaseCommand

from authservice.hashers import normalize_imported


def stored_algorithms():
    """``{algorithm: number of users}`` over every usable stored password."""
    counts = Counter()
    for encoded in get_user_model().objects.values_list("password", flat=True).iterator():
        if encoded and not encoded.startswith(UNUSABLE_PASSWORD_PREFIX):
            counts[normalize_imported(encoded).split("$", 1)[0]] += 1
    return counts


class Command(BaseCommand):
    help = "Count stored password hashes per algorithm and name the configured hashers none uses."

    def handle(self, *args, **options):
        counts = stored_algorithms()
        configured = [hasher.algorithm for hasher in get_hashers()]
        for algorithm in configured:
            note = "" if counts[algorithm] or algorithm == configured[0] else \
                " (unused: drop it from PASSWORD_HASHERS to make every sign-in cheaper)"
            self.stdout.write(f"{algorithm}: {counts[algorithm]}{note}")
        for algorithm in sorted(set(counts) - set(configured)):
            self.stdout.write(f"{algorithm}: {counts[algorithm]} (not configured: these users cannot sign in)")
