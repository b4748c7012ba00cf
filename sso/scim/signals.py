"""SCIM events as Django signals, sent after the change is committed. Receivers get ``sender`` plus:

- ``scim_user_created``, ``scim_user_updated``, ``scim_user_deactivated``, ``scim_user_reactivated``,
  ``scim_user_deleted``: ``connection``, ``scim_user`` (the ScimUser row), ``user`` (the AUTH_USER_MODEL row);
- ``scim_group_created``, ``scim_group_updated``: ``connection``, ``group``, ``added`` and ``removed``
  (ScimUser ids whose membership changed);
- ``scim_group_deleted``: ``connection``, ``group_id``, ``display_name``.
"""

from django.dispatch import Signal

scim_user_created = Signal()
scim_user_updated = Signal()
scim_user_deactivated = Signal()
scim_user_reactivated = Signal()
scim_user_deleted = Signal()
scim_group_created = Signal()
scim_group_updated = Signal()
scim_group_deleted = Signal()
