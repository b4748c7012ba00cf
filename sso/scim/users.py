"""SCIM Users: a provisioned user is an ordinary user (``AUTH_USER_MODEL``) plus its ScimUser row.

Trust (I1): a connection creates, adopts and renames users only to addresses its provider is trusted
for (``sso.linking.trusted_domains``: the provider's verified domains when domain verification is on).
Such a user's address counts as verified, so their first SSO sign-in through that provider links to
this very account through the one identity flow (authservice/flows/external_identity.py: the address is
vouched for by a verified domain, the local address is verified). A connection never takes over a
user it did not provision, unless that user already signs in through the same provider.

``active=false`` and DELETE set ``is_active`` false and end every session at once; every sign-in path
(password, social, SSO) refuses an inactive user. DELETE keeps the account (and its data): the
resource is gone, a later POST of the same userName brings the same user back.
"""

import hashlib
import json

from django.db import IntegrityError, connections, transaction
from django.utils import timezone
from scim2_models import Context, EnterpriseUser, GroupMembership, PatchOp, SCIMException, User

from authservice import users, wire
from authservice.flows import sessions
from authservice.models import Account
from sso import linking
from sso.scim import bounds, errors, filters, membership, projection, resources, signals
from sso.scim.models import ScimGroupMember, ScimUser, ScimUserTotal

UserResource = User[EnterpriseUser]
MAX_LENGTH = 255
PLACEHOLDER_DOMAIN = "scim.invalid"
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"


# --- reading --------------------------------------------------------------------------------------------
def queryset(connection):
    return ScimUser.objects.filter(connection=connection, deleted=False)


def get(connection, scim_id):
    found = queryset(connection).filter(pk=scim_id).select_related("user").first() \
        if isinstance(scim_id, str) and len(scim_id) <= 64 else None
    if found is None:
        raise errors.not_found("User")
    return found


def search(connection, query_filter):
    rows = queryset(connection)
    if query_filter:
        rows = rows.filter(filters.parse(query_filter, filters.USER_COLUMNS))
    return rows.order_by("created_at", "id")


def total(connection, rows, query_filter):
    """``rows.count()``. For the connection's whole list on PostgreSQL, the total its triggers keep
    (ScimUserTotal), read in the caller's snapshot, instead of counting every user; a filtered list is
    counted (the lookups IdPs filter by match one user)."""
    if query_filter or connections[rows.db].vendor != "postgresql":
        return rows.count()
    kept = ScimUserTotal.objects.using(rows.db).filter(connection=connection).values_list("live", flat=True)
    return kept.first() or 0


def to_model(scim_user, location, params=None):
    """The stored resource as a scim2 model, with what the server owns (id, meta, active, groups); with
    ``params`` naming ``attributes``, only those are parsed (sso/scim/projection.py)."""
    resource = scim_user.resource
    if params is not None and params.attributes:
        resource = projection.requested(resource, params.attributes)
    model = UserResource.model_validate(resource)
    model.id = scim_user.pk
    # ``active`` as the client last wrote it; a deactivation always shows (absent means active).
    if "active" in scim_user.resource or not scim_user.active:
        model.active = scim_user.active
    model.meta = resources.meta("User", scim_user, location)
    model.groups = [GroupMembership(**item) for item in _groups(scim_user)] or None
    return model


def to_wire(scim_user, location):
    """:func:`to_model` dumped, without the model: the stored resource is scim2-models' own output
    (:func:`_stored`), so a plain answer needs no validation round (about 2 ms a user, 100 to a page).
    Projections (``attributes``) still go through the model."""
    resource = dict(scim_user.resource)
    data = {"schemas": resource.pop("schemas", [USER_URN]), "id": scim_user.pk, **resource}
    if "active" in scim_user.resource or not scim_user.active:
        data["active"] = scim_user.active
    groups = _groups(scim_user)
    if groups:
        data["groups"] = groups
    data["meta"] = {"resourceType": "User", "created": wire.iso(scim_user.created_at),
                    "lastModified": wire.iso(scim_user.updated_at), "location": location}
    return data


def load_groups(scim_users):
    """Sets each user's ``scim_groups`` (their groups as the resource shows them) in one query for all:
    Django's prefetch of a page's memberships and their groups cost ~10 ms of CPU for 100 users."""
    found = {scim_user.pk: [] for scim_user in scim_users}
    if found:
        for member_id, group_id, name in ScimGroupMember.objects.filter(member_id__in=list(found)).order_by(
                "pk").values_list("member_id", "group_id", "group__display_name"):
            found[member_id].append({"value": group_id, "display": name, "type": "direct"})
    for scim_user in scim_users:
        scim_user.scim_groups = found[scim_user.pk]


def _groups(scim_user):
    if not hasattr(scim_user, "scim_groups"):
        load_groups([scim_user])
    return scim_user.scim_groups


# --- writing --------------------------------------------------------------------------------------------
class Derived:
    """The columns and user fields a resource determines."""

    def __init__(self, connection, model):
        self.user_name = (model.user_name or "").strip()
        if not self.user_name:
            raise errors.invalid_value("userName is required")
        if len(self.user_name) > MAX_LENGTH:
            raise errors.invalid_value("userName is too long")
        self.external_id = model.external_id or None
        if self.external_id is not None and len(self.external_id) > MAX_LENGTH:
            raise errors.invalid_value("externalId is too long")
        self.active = True if model.active is None else bool(model.active)
        self.email = users.normalize_email(_email_of(model) or (self.user_name if "@" in self.user_name else ""))
        self.name = _name_of(model) or self.user_name
        self.display_name_key = (model.display_name or "")[:MAX_LENGTH].lower()
        bounds.check_urls(model)
        self.email_verified = False
        if self.email:
            _check_address(self.email)
        else:
            self.email = placeholder_email(connection, self.user_name)

    def trust(self, provider):
        """I1, for a change that grants access (create, adopt, a new address, turning the user on): the
        address must be one ``provider`` may vouch for. A change that only takes access away needs no
        trust: refusing it when the domain's verification lapsed would keep a leaver signed in."""
        if not self.email.endswith("@" + PLACEHOLDER_DOMAIN):
            self.email_verified = _check_trusted(provider, self.email)

    def columns(self):
        email_key = "" if self.email.endswith("@" + PLACEHOLDER_DOMAIN) else self.email
        return {"user_name": self.user_name, "user_name_key": self.user_name.lower(), "external_id": self.external_id,
                "display_name_key": self.display_name_key, "email_key": email_key, "active": self.active}


def placeholder_email(connection, user_name):
    """The address of a user the directory gave none: under ``.invalid`` (RFC 2606), a name no one can
    receive mail at nor prove a domain for, so it opens no way in (I1). The user signs in once the
    directory gives them a real address of the provider's domains."""
    digest = hashlib.sha256(f"{connection.pk}:{user_name.lower()}".encode()).hexdigest()[:32]
    return f"{digest}@{PLACEHOLDER_DOMAIN}"


def _email_of(model):
    emails = [e for e in (model.emails or []) if e.value]
    for pick in (lambda e: e.type == "work" and e.primary, lambda e: e.type == "work", lambda e: e.primary):
        for email in emails:
            if pick(email):
                return str(email.value)
    return str(emails[0].value) if emails else ""


def _name_of(model):
    if model.display_name:
        return model.display_name[:MAX_LENGTH]
    name = model.name
    if name is None:
        return ""
    return (name.formatted or " ".join(p for p in (name.given_name, name.family_name) if p))[:MAX_LENGTH]


def _check_address(email):
    local, at, domain = email.rpartition("@")
    if not (local and at and domain) or "@" in local or len(email) > 254 or domain == PLACEHOLDER_DOMAIN \
            or any(c.isspace() or not c.isprintable() for c in email):
        raise errors.invalid_value("The e-mail address is not valid")


def _check_trusted(provider, email):
    """I1: the address must be one the provider may vouch for; returns whether it counts as verified."""
    domain = email.rpartition("@")[2]
    trusted = linking.trusted_domains(provider)
    if trusted is None:  # no domain verification: trusted for any address, as SSO sign-in is
        return False
    if not any(domain == d or domain.endswith("." + d) for d in trusted):
        raise errors.invalid_value(f"{domain} is not a verified domain of this connection's SSO provider")
    return True


def _stored(model):
    """What we keep of a request's resource: everything but the write-only password and server fields."""
    resource = model.model_dump(scim_ctx=Context.RESOURCE_REPLACEMENT_REQUEST)
    for key in ("password", "id", "meta", "groups"):
        resource.pop(key, None)
    bounds.check_stored(resource, len(json.dumps(resource, default=str)))
    return resource


def create(connection, body):
    bounds.check_lists(body)
    model = resources.validate(UserResource, body, Context.RESOURCE_CREATION_REQUEST)
    derived = Derived(connection, model)
    derived.trust(connection.provider)  # creating, adopting or reviving a user always grants access
    now = timezone.now()
    with transaction.atomic():
        existing = ScimUser.objects.select_for_update().filter(
            connection=connection, user_name_key=derived.user_name.lower()).select_related("user").first()
        if existing is not None and not existing.deleted:
            raise errors.uniqueness("A user with this userName exists")
        user = users.find_by_email(derived.email)
        if user is not None and (existing is None or existing.user_id != user.pk):
            existing = _adoptable(connection, user, existing)
        try:
            with transaction.atomic():
                if existing is not None:  # a deleted resource comes back, or a user the provider signs in
                    scim_user = existing
                    revived = scim_user.pk is not None
                    _write_user(connection, scim_user, derived)
                    for key, value in {**derived.columns(), "deleted": False, "resource": _stored(model),
                                       "updated_at": now}.items():
                        setattr(scim_user, key, value)
                    if not revived:
                        scim_user.created_at = now
                    scim_user.save()
                else:
                    user = users.create(email=derived.email, name=derived.name, email_verified=derived.email_verified,
                                        is_active=derived.active)
                    scim_user = ScimUser.objects.create(connection=connection, user=user, resource=_stored(model),
                                                        created_at=now, updated_at=now,
                                                        deactivated_by_scim=not derived.active, **derived.columns())
        except IntegrityError:
            raise errors.uniqueness("A user with this userName or e-mail address exists") from None
        if not derived.active:
            sessions.revoke(scim_user.user)
        membership.sync(connection, scim_user)
    signals.scim_user_created.send(sender=ScimUser, connection=connection, scim_user=scim_user, user=scim_user.user)
    return scim_user


def _adoptable(connection, user, existing):
    """The ScimUser (unsaved when new) under which ``connection`` may take over the existing ``user``.

    Only a user the same provider already signs in (an SSO account of it) and that no other connection
    manages: anything else would let a directory take over (deactivate, rename) a stranger's account.
    """
    if existing is not None:  # its own deleted resource belongs to another user: the address moved
        raise errors.uniqueness("A user with this e-mail address exists")
    if membership.owns_organization(connection, user):  # the directory's reach stops below the owner
        raise errors.uniqueness("A user with this e-mail address exists")
    own = ScimUser.objects.filter(user=user).first()
    if own is not None:
        if own.connection_id == connection.pk and own.deleted:
            return own
        raise errors.uniqueness("A user with this e-mail address exists")
    if not Account.objects.filter(user=user, provider_id=connection.provider.provider_id).exists():
        raise errors.uniqueness("A user with this e-mail address exists")
    return ScimUser(connection=connection, user=user)


def _write_user(connection, scim_user, derived):
    """The user's name, address and active state from the resource (the directory is authoritative).

    ``is_active``: the directory can turn a user off (not the organization's owner), but turns on only a
    user it turned off itself (``scim_user.deactivated_by_scim``). A user the site deactivated stays so
    through Okta's PUTs, which repeat ``active: true`` on every profile change, and through an
    ``active: false`` then ``true`` cycle; an adopted user the site had deactivated too.
    """
    user = scim_user.user
    changes = {}
    if users.name_of(user) != derived.name:
        changes["name"] = derived.name
    if users.email_of(user).lower() != derived.email:
        if users.email_taken(derived.email, exclude=user):
            raise errors.uniqueness("A user with this e-mail address exists")
        changes["email"] = derived.email
        changes["email_verified"] = derived.email_verified
    if user.is_active and not derived.active:
        _refuse_owner(connection, user)
        changes["is_active"], scim_user.deactivated_by_scim = False, True
    elif not user.is_active and derived.active and scim_user.deactivated_by_scim:
        changes["is_active"], scim_user.deactivated_by_scim = True, False
    elif user.is_active:
        scim_user.deactivated_by_scim = False  # on now (the site may have turned them on): not SCIM's doing
    if changes:
        users.update(user, **changes)


def _refuse_owner(connection, user):
    if membership.owns_organization(connection, user):
        raise errors.ScimError(403, "The organization's owner is not deactivated or deleted through SCIM")


def replace(connection, scim_id, body):
    """PUT (Okta updates this way): the resource becomes the body."""
    bounds.check_lists(body)
    model = resources.validate(UserResource, body, Context.RESOURCE_REPLACEMENT_REQUEST)
    return _save(connection, scim_id, lambda current: model)


def patch(connection, scim_id, body, max_operations):
    operations = body.get("Operations") if isinstance(body, dict) else None
    if isinstance(operations, list) and len(operations) > max_operations:  # counted before any is parsed (I6)
        raise errors.too_many("Too many PATCH operations")
    bounds.check_patch(body)
    patch_op = resources.validate(resources.parametrized(PatchOp, UserResource), body, Context.RESOURCE_PATCH_REQUEST)

    def apply(current):
        try:
            patch_op.patch(current)
        except SCIMException as exc:
            raise errors.ScimError(exc.status, exc.detail, exc.scim_type or None) from None
        except (ValueError, TypeError) as exc:
            raise errors.invalid_value(f"The PATCH cannot be applied: {str(exc)[:200]}") from None
        return current

    return _save(connection, scim_id, apply)


def _save(connection, scim_id, change):
    get(connection, scim_id)  # 404 before any transaction; the locked read below decides
    with transaction.atomic():
        scim_user = _locked(connection, scim_id)
        was_active = scim_user.active
        current = UserResource.model_validate(scim_user.resource)
        current.active = scim_user.active
        model = change(current)
        derived = Derived(connection, model)
        if users.email_of(scim_user.user).lower() != derived.email or derived.active and not was_active:
            derived.trust(connection.provider)  # a new address or turning on grants access
        if derived.user_name.lower() != scim_user.user_name_key and queryset(connection).filter(
                user_name_key=derived.user_name.lower()).exclude(pk=scim_user.pk).exists():
            raise errors.uniqueness("A user with this userName exists")
        try:
            with transaction.atomic():
                _write_user(connection, scim_user, derived)
                for key, value in {**derived.columns(), "resource": _stored(model), "updated_at": timezone.now()}.items():
                    setattr(scim_user, key, value)
                scim_user.save()
        except IntegrityError:
            raise errors.uniqueness("A user with this userName exists") from None
        if was_active and not derived.active:
            sessions.revoke(scim_user.user)
    _announce_update(connection, scim_user, was_active)
    return scim_user


def _locked(connection, scim_id):
    """The row, locked, read with its ``deleted=False`` condition in one statement: a DELETE that
    committed after an unlocked read found the row is seen here (404), never undone by the write that
    follows; a DELETE waits here for a PUT/PATCH in flight."""
    scim_user = queryset(connection).select_for_update().select_related("user").filter(pk=scim_id).first() \
        if isinstance(scim_id, str) and len(scim_id) <= 64 else None
    if scim_user is None:
        raise errors.not_found("User")
    return scim_user


def _announce_update(connection, scim_user, was_active):
    arguments = {"sender": ScimUser, "connection": connection, "scim_user": scim_user, "user": scim_user.user}
    signals.scim_user_updated.send(**arguments)
    if was_active and not scim_user.active:
        signals.scim_user_deactivated.send(**arguments)
    elif scim_user.active and not was_active:
        signals.scim_user_reactivated.send(**arguments)


def delete(connection, scim_id):
    """The resource goes; the user stays, inactive, signed out everywhere, out of the organization."""
    with transaction.atomic():
        scim_user = _locked(connection, scim_id)
        if scim_user.user.is_active:
            _refuse_owner(connection, scim_user.user)
            users.update(scim_user.user, is_active=False)
            scim_user.deactivated_by_scim = True
        scim_user.deleted, scim_user.active, scim_user.updated_at = True, False, timezone.now()
        scim_user.save(update_fields=["deleted", "active", "deactivated_by_scim", "updated_at"])
        scim_user.group_memberships.all().delete()
        sessions.revoke(scim_user.user)
        membership.sync(connection, scim_user)
    signals.scim_user_deleted.send(sender=ScimUser, connection=connection, scim_user=scim_user, user=scim_user.user)
