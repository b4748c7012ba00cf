"""Keeps ``ScimUser.deactivated_by_scim`` true only while SCIM's deactivation is the one in force.

The flag lets the directory turn back on a user it turned off. When the site itself saves the user
inactive afterwards (an admin's ban in Django admin, a lock through ``authservice.users.update``), the
decision in force is the site's: the flag is cleared, so the directory's ``active: true`` no longer
undoes it. SCIM's own deactivation also passes here (the flag is cleared), then sets the flag again on
its ScimUser row, which it saves after the user.
"""

from django.conf import settings
from django.db.models.signals import post_save


def _site_deactivated(sender, instance, created, update_fields=None, **kwargs):
    if created or getattr(instance, "is_active", True):
        return
    if update_fields is not None and "is_active" not in update_fields:
        return  # another field of an inactive user changed: not a new decision about access
    from sso.scim.models import ScimUser

    ScimUser.objects.filter(user_id=instance.pk, deactivated_by_scim=True).update(deactivated_by_scim=False)


def connect():
    post_save.connect(_site_deactivated, sender=settings.AUTH_USER_MODEL, dispatch_uid="sso.scim.site_deactivated")
