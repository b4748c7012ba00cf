"""Organization membership and the provisionUser hook on every SSO sign-in (sso.md §8, issue 14 §4).

Two steps, at two moments of the core flow (authservice/flows/external_identity.py):

- :func:`grant` (step 4, membership and role) runs *inside* the sign-in's transaction, right after
  the session row is written (``Authority.grant``). The session and the membership it should see are
  committed together: the first request after sign-in already sees the member and its role, and a
  failure (a ``get_role`` hook raising) leaves neither.
- :func:`run` (step 3, provisionUser) runs once that transaction committed (``Authority.provision``);
  an APIError from the hook removes the session. It then announces the membership change
  (``sso.signals.member_added`` / ``member_role_changed``), so no receiver sees uncommitted rows.

Roles follow the IdP on every sign-in (docs/sso-roles.md): where the provider maps groups to roles
(``organizationProvisioning.roleMapping``, sso/roles.py) or ``organization_provisioning.get_role`` is
set, a membership this provider row created (``Member.managed_by``: the row's id, never reused, not the
providerId, which a later provider may take again) gets the role the sign-in's groups
give now. A membership made another way, or one whose role includes ``owner``, is never changed, and
no sign-in ever makes an owner.
"""

import logging
from dataclasses import dataclass

from sso import app_settings as sso_settings
from sso import organizations, roles, signals
from sso.models import Member, Organization, SsoProvider

logger = logging.getLogger("sso")

ASSIGNABLE_ROLES = roles.ASSIGNABLE_ROLES


@dataclass
class MembershipChange:
    """What :func:`grant` wrote, announced by :func:`run` once committed."""

    member: Member
    created: bool
    previous_role: str | None = None


def run(*, user, user_info, token, provider, is_new_user, membership=None):
    """Step 3 (provisionUser), then the signals of what step 4 wrote."""
    provision(user=user, user_info=user_info, token=token, provider=provider, is_new_user=is_new_user)
    announce(membership, provider)


def provision(*, user, user_info, token, provider, is_new_user):
    """Step 3: runs on every SSO sign-in (the seed), told whether the user is new; only on the one that
    created the user when ``provision_user_on_every_login`` is off (better-auth's default)."""
    if not (is_new_user or sso_settings.provision_user_on_every_login):
        return
    hook = sso_settings.callable_setting(sso_settings.provision_user)
    if hook is not None:
        hook(user=user, user_info=user_info, token=token, provider=provider, is_new_user=is_new_user)
    signals.user_provisioned.send(sender=SsoProvider, user=user, user_info=user_info, token=token,
                                  provider=provider, is_new_user=is_new_user)


def grant(*, user, user_info, token, provider):
    """Step 4, inside the sign-in's transaction: join the provider's organization, or bring the role
    of a membership this provider manages in line with the IdP. Returns a :class:`MembershipChange`
    or None when nothing changed."""
    settings = sso_settings.organization_provisioning
    if not provider.organization_id or not sso_settings.organization.enabled or settings.disabled:
        return None
    if not Organization.objects.filter(pk=provider.organization_id).exists():
        return None
    # Locked: two sign-ins of one user at once compute and write the role one after the other.
    member = Member.objects.select_for_update().filter(organization_id=provider.organization_id,
                                                       user=user).first()
    if member is None:
        role = resolve_role(user=user, user_info=user_info, token=token, provider=provider)
        created = organizations.add_member(provider.organization_id, user, role,
                                           managed_by=provider.pk, announce=False)
        return MembershipChange(created, True) if created is not None else None
    if not follows_idp(provider) or member.managed_by != provider.pk or Member.OWNER in member.roles():
        return None
    role = resolve_role(user=user, user_info=user_info, token=token, provider=provider)
    if role == member.role:
        return None
    previous, member.role = member.role, role
    Member.objects.filter(pk=member.pk).update(role=role)
    return MembershipChange(member, False, previous)


def follows_idp(provider):
    """Whether existing memberships' roles are re-decided on each sign-in: only when something can
    decide them (a role mapping or the get_role hook); otherwise a role set by hand stays."""
    return roles.mapping_of(provider) is not None \
        or sso_settings.organization_provisioning.get_role is not None


def resolve_role(*, user, user_info, token, provider):
    """``get_role`` when set (it wins), else the provider's role mapping, else the default role."""
    default = roles.default_role(provider)
    get_role = sso_settings.callable_setting(sso_settings.organization_provisioning.get_role)
    if get_role is not None:
        role = get_role(user=user, user_info=user_info, token=token, provider=provider)
    else:
        role = roles.role_from_user_info(provider, user_info) or default
    if role not in ASSIGNABLE_ROLES:
        # SSO may never mint owners: an IdP-controlled claim must not take over the organization.
        logger.warning("SSO provider %s: role %r is not assignable, using %r", provider.provider_id, role, default)
        return default
    return role


def announce(change, provider):
    if change is None:
        return
    if change.created:
        signals.member_added.send(sender=Member, member=change.member)
    else:
        signals.member_role_changed.send(sender=Member, member=change.member, previous_role=change.previous_role,
                                         provider=provider)
