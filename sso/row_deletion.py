"""Deleting an SsoProvider row deletes what is keyed by its ``provider_id``, on every path.

SSO accounts are keyed by ``(provider_id, account_id)`` (authservice/flows/external_identity.py), not by
the row. An account left behind by a deleted row is picked up by the next provider of the same id: a
settings provider the row shadowed (attack pass 14d: the attacker's IdP linked the victim's subject
to the attacker's user), or a later registration. ``providers.delete`` removed them, but the Django
admin (single and bulk delete), ``QuerySet.delete()``, the cascade from a deleted owner and a shell
did not. A ``post_delete`` receiver runs for all of them, inside the deletion's transaction, so the
row and its accounts go together or not at all (I1). Users stay: they link again at their next
sign-in. The pending domain-verification token goes too, as in ``providers.delete``.

The SCIM connection, the domain rows and SamlSession records cascade with the row (their foreign keys).

A row whose id the deployment claims (sso/provider_claims.py) shares its accounts with the claimant,
so deleting it deletes the claimant's users' accounts too. Its owner cannot do that through
delete-provider (409), and :func:`_refuse_cascade` stops the other way round: deleting the owner (their
own ``delete-user``, or the admin deleting that user) cascades to the row and is refused with the same
409 until the operator deletes the row itself (attack pass 14f). Django tells the receivers where a
deletion started (``origin``, Django 4.1+).
"""

from django.db.models import QuerySet
from django.db.models.signals import post_delete, pre_delete


def _refuse_cascade(sender, instance, origin=None, **kwargs):
    from sso.models import SsoProvider
    from sso.provider_claims import claims, refuse_row

    direct = isinstance(origin, SsoProvider) or (isinstance(origin, QuerySet) and origin.model is SsoProvider)
    if not direct and instance.provider_id in claims():
        refuse_row(instance)


def _delete_linked(sender, instance, using, **kwargs):
    from authservice.models import Account, Verification
    from sso import domains

    if getattr(instance, "from_settings", False):  # never a row (its delete() refuses anyway)
        return
    Account.objects.using(using).filter(provider_id=instance.provider_id).delete()
    Verification.objects.using(using).filter(identifier=domains.identifier(instance.provider_id)).delete()


def connect():
    from sso.models import SsoProvider

    post_delete.connect(_delete_linked, sender=SsoProvider, dispatch_uid="sso.row_deletion")
    pre_delete.connect(_refuse_cascade, sender=SsoProvider, dispatch_uid="sso.row_deletion.cascade")
