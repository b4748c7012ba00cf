"""Every change of a user's password, wherever it is made, ends what the old password opened.

authservice's own flows do it themselves (``passwords.store_password``). A password changed outside
them (Django's admin form, ``manage.py changepassword``, a project's ``set_password()`` + ``save()``)
would otherwise leave trusted devices, pending 2FA sign-ins and reset links alive (attack 17b).

Django marks a real change: ``set_password()`` keeps the raw password in ``_password`` until the
save that follows, while a hash upgrade at login clears it first ("hash upgrades shouldn't be
considered password changes", ``AbstractBaseUser.check_password``). So ``post_save`` costs nothing
on any other save. Not seen: a queryset ``update(password=...)`` or a raw ``user.password = ...``;
call :func:`authservice.flows.passwords.forget_what_the_old_password_opened` after those.
"""

from django.conf import settings
from django.db.models.signals import post_save

from authservice.flows import passwords


def _saved(sender, instance, created, **kwargs):
    if created or getattr(instance, "_password", None) is None:
        return
    passwords.forget_what_the_old_password_opened(instance)


def connect():
    post_save.connect(_saved, sender=settings.AUTH_USER_MODEL, dispatch_uid="authservice.password_changes")
