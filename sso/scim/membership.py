"""SCIM users and groups -> membership of the provider's organization (issue 14 §1 and §4).

A provisioned, not-deleted user is a member of the provider's organization; their role comes from
the display names of the connection's groups they are in, through :func:`role_for_groups` only.
Owners are never made nor changed from SCIM: an IdP's directory must not take over the organization.
Only memberships this provider manages (``Member.managed_by``: made by its SCIM directory or its
sign-ins) are changed or removed; one an organization admin made by hand is left alone, as SSO
sign-ins leave it (docs/sso-roles.md).
"""

from collections import defaultdict

from sso import app_settings as sso_settings
from sso import organizations, roles
from sso.models import Member
from sso.scim.models import ScimGroupMember, ScimUser


def role_for_groups(provider, group_names):
    """The organization role for a member of ``group_names`` (display names) of ``provider``'s directory:
    the provider's role mapping (sso/roles.py), the same decision an SSO sign-in's groups get. Never "owner"."""
    return roles.role_for_groups(provider, group_names)


def _organization_id(connection):
    provider = connection.provider
    settings = sso_settings.organization_provisioning
    if not provider.organization_id or not sso_settings.organization.enabled or settings.disabled:
        return None
    return provider.organization_id


def sync(connection, scim_user):
    """Make ``scim_user``'s membership follow their SCIM state: present with the groups' role, or gone."""
    sync_many(connection, [scim_user.pk])


def sync_many(connection, scim_user_ids):
    """:func:`sync` for many users at once (a group push of thousands): three reads, then one write per
    kind of change (inserts, deletions, one update per role)."""
    organization_id = _organization_id(connection)
    if organization_id is None or not scim_user_ids:
        return
    ids = list(scim_user_ids)
    scim_users = list(ScimUser.objects.filter(connection=connection, pk__in=ids).select_related("user"))
    members = {m.user_id: m for m in Member.objects.filter(
        organization_id=organization_id, user_id__in=[u.user_id for u in scim_users])}
    names = defaultdict(list)
    for member_id, name in ScimGroupMember.objects.filter(member_id__in=ids).values_list(
            "member_id", "group__display_name"):
        names[member_id].append(name)
    new, gone, roles_to = [], [], defaultdict(list)
    for scim_user in scim_users:
        member = members.get(scim_user.user_id)
        if member is not None and (Member.OWNER in member.roles() or member.managed_by != connection.provider.pk):
            continue  # owners, and memberships made by hand, are the organization's, not the directory's
        if scim_user.deleted:
            if member is not None:
                gone.append(member.pk)
            continue
        role = role_for_groups(connection.provider, names[scim_user.pk])
        if member is None:
            new.append(Member(organization_id=organization_id, user=scim_user.user, role=role,
                              managed_by=connection.provider.pk))
        elif member.role != role:
            roles_to[role].append(member.pk)
    # A statement per kind of change, not per member: a push of 1,000 members stays within I6's budget.
    if gone:
        Member.objects.filter(pk__in=gone).delete()
    for role, pks in roles_to.items():
        Member.objects.filter(pk__in=pks).update(role=role)
    organizations.add_members(organization_id, new)


def owns_organization(connection, user):
    """Whether ``user`` owns the provider's organization. SCIM neither adopts nor deactivates nor deletes
    such a user: a token an organization admin may mint must not reach the one role above them."""
    organization_id = connection.provider.organization_id
    if not organization_id:
        return False
    return any(Member.OWNER in member.roles()
               for member in Member.objects.filter(organization_id=organization_id, user=user))
