"""Django authentication backends that keep authservice's rules.

Django's ``ModelBackend`` checks a password and nothing else, so its login form (the admin's, or a
project's ``LoginView``) is a second way in that forgets the second factor: a staff member's password
alone would open the admin, and the Django session it makes is ``request.user`` everywhere (attack
17b). Use :class:`ModelBackend` instead of Django's (``authservice.W013`` warns otherwise)::

    AUTHENTICATION_BACKENDS = ["authservice.backends.ModelBackend"]

Users who must give a second factor then sign in through authservice only (which asks for it); the
admin takes them through authservice's session cookie, as it takes everyone signed in there.
"""

from django.contrib.auth import backends

from authservice.two_factor import policy


class ModelBackend(backends.ModelBackend):
    """Django's ModelBackend, refusing users with a second factor on (or required of them)."""

    def user_can_authenticate(self, user):
        # Also read by get_user(): a Django session made before 2FA was turned on stops counting too.
        return super().user_can_authenticate(user) and not policy.second_factor_required(user)
