"""SCIM Groups: sets of the connection's users, which decide organization membership and role.

Members are rows (ScimGroupMember), not a JSON list, so adding or removing one member of a group of
10,000 is one indexed statement. PATCH is read here, not by scim2-models' in-memory patch, for that
reason; it takes what Entra and Okta send (``op`` in any case, a value object without ``path``,
``members[value eq "..."]``). A member must be a user of the same connection (isolation).
"""

from django.db import IntegrityError, transaction
from django.utils import timezone
from scim2_models import Context, Group, GroupMember, SCIMException
from scim2_models.path import Comparison, LogicalExpr, LogicalOperator, ScimFilter

from sso.scim import bounds, errors, filters, membership, resources, signals
from sso.scim.models import ScimGroup, ScimGroupMember, ScimUser

GROUP_URN = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
MAX_LENGTH = 255


# --- reading --------------------------------------------------------------------------------------------
def get(connection, scim_id, for_update=False):
    rows = ScimGroup.objects.filter(connection=connection)
    if for_update:
        rows = rows.select_for_update()
    found = rows.filter(pk=scim_id).first() if isinstance(scim_id, str) and len(scim_id) <= 64 else None
    if found is None:
        raise errors.not_found("Group")
    return found


def search(connection, query_filter):
    rows = ScimGroup.objects.filter(connection=connection)
    if query_filter:
        rows = rows.filter(filters.parse(query_filter, filters.GROUP_COLUMNS)).distinct()
    return rows.order_by("created_at", "id")


def total(connection, rows, query_filter):
    """A connection has tens of groups, not 100,000 users: counted (users.total keeps a total)."""
    return rows.count()


def wants_members(params, listing=False):
    """Whether the answer shows members: loading 10,000 of them for a client that excluded them is waste.
    A list (``GET /Groups``, ``.search``) shows them only when ``attributes`` names them: a page of 100
    groups of 10,000 would be a million members for one small GET (I6). Entra excludes them anyway
    (``excludedAttributes=members``), Okta reads a group's members from the group itself."""
    if params is None:
        return not listing
    if params.excluded_attributes and any(str(a).lower().endswith("members") for a in params.excluded_attributes):
        return False
    if params.attributes:
        return any("members" in str(a).lower() for a in params.attributes)
    return not listing


def to_model(group, location, user_location, with_members=True):
    model = Group(id=group.pk, display_name=group.display_name, external_id=group.external_id,
                  meta=resources.meta("Group", group, location))
    if with_members:
        rows = ScimGroupMember.objects.filter(group=group).order_by("member__created_at", "member_id") \
            .values_list("member_id", "display", "member__user_name")
        model.members = [GroupMember(value=pk, display=display or name, type="User", ref=user_location(pk))
                         for pk, display, name in rows] or None
    return model


# --- writing --------------------------------------------------------------------------------------------
def _text(value, name, required=False):
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise errors.invalid_value(f"{name} must be a non-empty string" if required else f"{name} must be a string")
    if len(value) > MAX_LENGTH:
        raise errors.invalid_value(f"{name} is too long")
    return value


def _member_ids(connection, values):
    """``{ScimUser id: display}`` of the ``members`` items; 400 when one is not a user of this connection."""
    if values is None:
        return {}
    if isinstance(values, dict):
        values = [values]
    if not isinstance(values, list) or not all(isinstance(v, dict) and isinstance(v.get("value"), str)
                                               for v in values):
        raise errors.invalid_value("members must be a list of {\"value\": \"<user id>\"}")
    wanted = {v["value"]: _display(v.get("display")) for v in values}
    found = set(ScimUser.objects.filter(connection=connection, deleted=False, pk__in=list(wanted))
                .values_list("pk", flat=True)) if wanted else set()
    if found != set(wanted):
        raise errors.invalid_value("members names a user that does not exist")
    return wanted


def _display(value):
    return value[:MAX_LENGTH] if isinstance(value, str) else ""


def create(connection, body):
    bounds.check_members(body)
    model = resources.validate(Group, body, Context.RESOURCE_CREATION_REQUEST)
    name = _text(model.display_name, "displayName", required=True)
    external_id = _text(model.external_id, "externalId")
    now = timezone.now()
    with transaction.atomic():
        members = _member_ids(connection, body.get("members"))
        group = ScimGroup.objects.create(connection=connection, display_name=name, display_name_key=name.lower(),
                                         external_id=external_id, created_at=now, updated_at=now)
        ScimGroupMember.objects.bulk_create([ScimGroupMember(group=group, member_id=pk, display=display)
                                             for pk, display in members.items()])
        membership.sync_many(connection, set(members))
    signals.scim_group_created.send(sender=ScimGroup, connection=connection, group=group, added=set(members),
                                    removed=set())
    return group


def replace(connection, scim_id, body):
    """PUT: name, externalId and the member set become the body's."""
    bounds.check_members(body)
    model = resources.validate(Group, body, Context.RESOURCE_REPLACEMENT_REQUEST)
    with transaction.atomic():
        group = get(connection, scim_id, for_update=True)
        changes = Changes(group)
        changes.set_attribute("displayName", model.display_name)
        changes.set_attribute("externalId", model.external_id)
        changes.replace_members(_member_ids(connection, body.get("members")))
        changes.save(connection)
    changes.announce(connection)
    return group


def patch(connection, scim_id, body, max_operations):
    operations = _operations(body, max_operations)
    bounds.check_members(body)
    with transaction.atomic():
        group = get(connection, scim_id, for_update=True)
        changes = Changes(group)
        for operation in operations:
            _apply(connection, changes, operation)
        changes.save(connection)
    changes.announce(connection)
    return group


def delete(connection, scim_id):
    with transaction.atomic():
        group = get(connection, scim_id, for_update=True)
        member_ids = set(group.memberships.values_list("member_id", flat=True))
        group_id, name = group.pk, group.display_name
        group.delete()
        membership.sync_many(connection, member_ids)
    signals.scim_group_deleted.send(sender=ScimGroup, connection=connection, group_id=group_id, display_name=name)


# --- PATCH --------------------------------------------------------------------------------------------
class Changes:
    """What a PUT or PATCH does to one group, written by :meth:`save` in as few statements as it takes."""

    def __init__(self, group):
        self.group = group
        self.added, self.removed = {}, set()  # added: {id: display}
        self.remove_all = False
        self.touched = False
        self.renamed = False  # the role mapping reads display names: every member's role may change

    def set_attribute(self, name, value):
        if name == "displayName":
            value = _text(value, "displayName", required=True)
            self.renamed = self.renamed or value != self.group.display_name
            self.group.display_name, self.group.display_name_key = value, value.lower()
        else:
            self.group.external_id = _text(value, "externalId")
        self.touched = True

    def add_members(self, members):
        self.added.update(members)
        self.removed -= set(members)

    def remove_members(self, ids):
        self.removed |= ids
        for pk in ids:
            self.added.pop(pk, None)

    def replace_members(self, members):
        self.remove_all, self.removed, self.added = True, set(), dict(members)

    def save(self, connection):
        group = self.group
        memberships = ScimGroupMember.objects.filter(group=group)
        if self.remove_all:
            self.removed = set(memberships.exclude(member_id__in=list(self.added))
                               .values_list("member_id", flat=True))
        if self.removed:
            memberships.filter(member_id__in=list(self.removed)).delete()
        if self.added:
            present = dict(memberships.filter(member_id__in=list(self.added)).values_list("member_id", "display"))
            for pk, display in present.items():
                if self.added[pk] and self.added[pk] != display:  # a new display for a present member
                    memberships.filter(member_id=pk).update(display=self.added[pk])
                del self.added[pk]
            try:
                with transaction.atomic():
                    ScimGroupMember.objects.bulk_create([ScimGroupMember(group=group, member_id=pk, display=display)
                                                         for pk, display in self.added.items()])
            except IntegrityError:
                raise errors.ScimError(409, "The group changed concurrently; retry") from None
        group.updated_at = timezone.now()
        group.save()
        synced = set(self.added) | self.removed
        if self.renamed:
            synced |= set(memberships.values_list("member_id", flat=True))
        membership.sync_many(connection, synced)

    def announce(self, connection):
        signals.scim_group_updated.send(sender=ScimGroup, connection=connection, group=self.group,
                                        added=set(self.added), removed=self.removed)


def _operations(body, max_operations):
    if not isinstance(body, dict):
        raise errors.invalid_syntax("The request body must be a JSON object")
    schemas = body.get("schemas")
    if not isinstance(schemas, list) or PATCH_URN not in schemas:
        raise errors.invalid_syntax(f"schemas must contain {PATCH_URN}")
    operations = body.get("Operations")
    if not isinstance(operations, list) or not operations:
        raise errors.invalid_syntax("Operations must be a non-empty list")
    if len(operations) > max_operations:
        raise errors.too_many("Too many PATCH operations")
    for operation in operations:
        if not isinstance(operation, dict) or not isinstance(operation.get("op"), str) \
                or operation["op"].lower() not in ("add", "remove", "replace"):
            raise errors.invalid_value("Each operation needs op: add, remove or replace")
        if operation.get("path") is not None and not isinstance(operation["path"], str):
            raise errors.invalid_path("path must be a string")
    return operations


def _apply(connection, changes, operation):
    op = operation["op"].lower()  # Entra sends "Add", "Replace", "Remove"
    path, value = operation.get("path"), operation.get("value")
    if path is None:
        # No path: the value is an object of attributes (Okta's and Entra's replace of displayName).
        if op == "remove" or not isinstance(value, dict):
            raise errors.invalid_value("An operation without path needs an object value")
        for key, item in value.items():
            _apply_attribute(connection, changes, op, _attribute(key), item)
        return
    path = path.strip()
    if "[" in path:
        _apply_filtered_members(connection, changes, op, path, value)
        return
    _apply_attribute(connection, changes, op, _attribute(path), value, has_path=True)


def _attribute(path):
    name = path[len(GROUP_URN) + 1:] if path.lower().startswith(GROUP_URN.lower() + ":") else path
    name = name.lower()
    known = {"displayname": "displayName", "externalid": "externalId", "members": "members",
             "id": "id", "schemas": "schemas", "meta": "meta"}
    if name not in known:
        raise errors.invalid_path(f"Unknown or unsupported attribute: {path[:100]}")
    return known[name]


def _apply_attribute(connection, changes, op, name, value, has_path=False):
    if name in ("id", "schemas", "meta"):
        if has_path:
            raise errors.mutability(f"{name} cannot be changed")
        return  # Okta repeats the id in its value object; ignore what the server owns
    if name == "members":
        if op == "remove":
            if value is None:
                changes.replace_members({})
            else:
                changes.remove_members(_listed_ids(value))
            return
        ids = _member_ids(connection, value)
        changes.replace_members(ids) if op == "replace" else changes.add_members(ids)
        return
    if op == "remove":
        if name == "displayName":
            raise errors.mutability("displayName is required")
        changes.set_attribute(name, None)
        return
    changes.set_attribute(name, value)


def _listed_ids(value):
    """Ids to remove: a member that is not in the group (or not a user) is simply not there."""
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) and isinstance(v.get("value"), str) for v in value):
        raise errors.invalid_value("members must be a list of {\"value\": \"<user id>\"}")
    return {v["value"] for v in value}


def _apply_filtered_members(connection, changes, op, path, value):
    """``members[value eq "id"]`` (Okta's remove), possibly or-ed: only removal names members this way."""
    head, _, rest = path.partition("[")
    if _attribute(head) != "members" or not rest.endswith("]") or op != "remove":
        raise errors.invalid_path("Only remove supports a members[value eq \"...\"] path")
    try:
        node = ScimFilter(rest[:-1]).ast
    except (SCIMException, ValueError):
        raise errors.invalid_path("Invalid member filter") from None
    changes.remove_members(_filtered_ids(node))


def _filtered_ids(node):
    if isinstance(node, LogicalExpr) and node.op == LogicalOperator.or_:
        return set().union(*(_filtered_ids(term) for term in node.terms))
    if isinstance(node, Comparison) and node.attr_path.attr.lower() == "value" and not node.attr_path.sub_attr \
            and node.op.value == "eq" and isinstance(node.value, str):
        return {filters.text_literal(node.value)}
    raise errors.invalid_path("A member filter names members by value eq \"<id>\"")
