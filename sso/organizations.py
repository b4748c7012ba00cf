"""Organizations and members: better-auth's organization plugin, the subset SSO needs (sso.md §8.1)."""

from django.db import IntegrityError, transaction

from authservice import users, wire
from authservice.errors import APIError
from sso import app_settings, signals
from sso.errors import codes
from sso.models import Member, Organization, SessionOrganization


def enabled():
    return app_settings.organization.enabled


def require_enabled():
    """The organization endpoints exist only with the feature on."""
    if not enabled():
        raise APIError(404, codes.NOT_FOUND)


# --- wire shapes ---------------------------------------------------------------------------------
def organization_wire(org):
    return {
        "id": org.pk,
        "name": org.name,
        "slug": org.slug,
        "logo": org.logo,
        "metadata": org.metadata,
        "createdAt": wire.iso(org.created_at),
    }


def member_wire(member, with_user=False):
    data = {
        "id": member.pk,
        "organizationId": member.organization_id,
        "userId": str(member.user_id),
        "role": member.role,
        "createdAt": wire.iso(member.created_at),
    }
    if with_user:
        user = member.user
        record = users.to_wire(user)
        data["user"] = {key: record[key] for key in ("id", "name", "email", "image")}
    return data


# --- membership ----------------------------------------------------------------------------------
def membership(user, organization_id):
    if not organization_id:
        return None
    return Member.objects.filter(user=user, organization_id=organization_id).first()


def is_owner_or_admin(user, organization_id):
    member = membership(user, organization_id)
    return member is not None and member.is_owner_or_admin


def admin_organization_ids(user):
    """Ids of the organizations where ``user`` is owner or admin."""
    return [m.organization_id for m in Member.objects.filter(user=user) if m.is_owner_or_admin]


def add_member(organization_id, user, role, *, managed_by="", announce=True):
    """Insert ``user`` into the organization once; returns the new Member or ``None`` if present.

    The one place a membership is inserted (SSO provisioning too). The unique (organization, user)
    constraint makes concurrent sign-ins insert one row only, so no lookup comes first: callers that
    must not compute a role for an existing member check membership themselves. A caller inside a
    larger transaction passes ``announce=False`` and sends ``member_added`` once it committed.
    """
    try:
        with transaction.atomic():
            member = Member.objects.create(organization_id=organization_id, user=user, role=role,
                                           managed_by=managed_by)
    except IntegrityError:
        return None
    if announce:
        signals.member_added.send(sender=Member, member=member)
    return member


def add_members(organization_id, new_members):
    """:func:`add_member` for many unsaved Member rows at once (a SCIM group push of thousands): one
    insert that skips users already present (the unique constraint), one read of which went in, and
    ``member_added`` for those only."""
    if not new_members:
        return []
    with transaction.atomic():
        Member.objects.bulk_create(new_members, ignore_conflicts=True)
    inserted = set(Member.objects.filter(pk__in=[m.pk for m in new_members]).values_list("pk", flat=True))
    added = [member for member in new_members if member.pk in inserted]
    for member in added:
        signals.member_added.send(sender=Member, member=member)
    return added

# --- the session's active organization -----------------------------------------------------------
def active_organization_id(session):
    row = SessionOrganization.objects.filter(session=session).first()
    return row.active_organization_id if row else None


def set_active_organization(session, organization):
    SessionOrganization.objects.update_or_create(
        session=session, defaults={"active_organization": organization})


# --- flows ---------------------------------------------------------------------------------------
def create(found, *, name, slug, logo=None, metadata=None, keep_current_active=False):
    """A new organization with the caller as its ``owner``; returns ``(organization, member)``."""
    if Organization.objects.filter(slug=slug).exists():
        raise APIError(400, codes.ORGANIZATION_ALREADY_EXISTS)
    try:
        with transaction.atomic():
            org = Organization.objects.create(name=name, slug=slug, logo=logo, metadata=metadata)
            member = Member.objects.create(organization=org, user=found.user, role=Member.OWNER)
    except IntegrityError:  # the same slug created concurrently
        raise APIError(400, codes.ORGANIZATION_ALREADY_EXISTS) from None
    if not keep_current_active:
        set_active_organization(found.session, org)
    signals.organization_created.send(sender=Organization, organization=org, user=found.user)
    signals.member_added.send(sender=Member, member=member)
    return org, member


def list_for(user):
    return Organization.objects.filter(members__user=user).order_by("created_at", "id")


def list_members(found, *, organization_id=None, organization_slug=None, limit=None, offset=None):
    """``(members, total)`` of an organization the caller belongs to (default: the active one)."""
    organization_id = organization_id or active_organization_id(found.session)
    if organization_slug:
        org = Organization.objects.filter(slug=organization_slug).first()
        if org is None:
            raise APIError(400, codes.ORGANIZATION_NOT_FOUND)
        organization_id = org.pk
    if not organization_id:
        raise APIError(400, codes.NO_ACTIVE_ORGANIZATION)
    if membership(found.user, organization_id) is None:
        raise APIError(403, codes.YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION)
    query = users.with_users(Member.objects.filter(organization_id=organization_id), "user")
    query = query.order_by("created_at", "id")
    total = query.count()
    start = offset or 0
    members = list(query[start:start + limit] if limit is not None else query[start:])
    return members, total
