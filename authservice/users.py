"""better-auth's user record on whatever ``AUTH_USER_MODEL`` is: the one module that knows the mapping.

better-auth's user has ``id`` (a string on the wire), ``name``, ``email``, ``emailVerified``,
``image``, ``createdAt`` and ``updatedAt``. :class:`authservice.models.AbstractAuthUser` has a field
for each. Any other model (``django.contrib.auth.models.User``, a project's custom model) keeps what
it has, and the rest lives in :class:`authservice.models.AuthProfile`, one row per user:

==============  ==========================================================================
email           the model's ``get_email_field_name()``
name            a ``name`` field; else ``first_name``/``last_name`` (read through
                ``get_full_name()``, written split at the first space); else the profile
emailVerified   an ``email_verified`` field, else the profile
(proof time)    an ``email_verified_at`` field, else the profile: when control of the address was
                first proven, set with the first ``email_verified=True`` (flows/email_proof.py)
image           an ``image`` field, else the profile
createdAt       ``created_at``, else ``date_joined``, else the profile
updatedAt       ``updated_at``, else the profile (touched by every change made here)
==============  ==========================================================================

A model whose ``USERNAME_FIELD`` is not the e-mail gets its username from the adapter
(``DefaultAdapter.populate_username``). Flows never read or write these attributes directly.
"""

import functools
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import transaction
from django.utils import timezone

from authservice import additional_fields, app_settings, wire

# better-auth's names of what a flow may change through :func:`update`.
CHANGEABLE = ("name", "image", "email", "email_verified", "email_verified_at")


@dataclass(frozen=True)
class Layout:
    """Where each better-auth field of one user model lives."""

    email: str  # the e-mail field's name
    name: str  # "field" | "first_last" | "profile"
    verified_in_model: bool
    verified_at_in_model: bool
    image_in_model: bool
    created: str | None  # the model's creation field, or None for the profile's
    updated: str | None  # the model's update field, or None for the profile's
    own: bool  # an AbstractAuthUser: every field in the model, e-mails stored lower-case

    @property
    def needs_profile(self):
        return not self.own and (self.name == "profile" or not self.verified_in_model
                                 or not self.verified_at_in_model or not self.image_in_model
                                 or self.created is None or self.updated is None)


def has_concrete_field(model, name):
    """Whether ``model`` has a column ``name`` of its own (not a relation)."""
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return False
    return field.concrete and not field.is_relation


@functools.lru_cache(maxsize=None)
def layout(model=None):
    """The :class:`Layout` of ``model`` (the user model by default)."""
    from authservice.models import AbstractAuthUser

    model = model or get_user_model()
    has = functools.partial(has_concrete_field, model)
    if has("name"):
        name = "field"
    elif has("first_name") and has("last_name"):
        name = "first_last"
    else:
        name = "profile"
    return Layout(
        email=model.get_email_field_name(),
        name=name,
        verified_in_model=has("email_verified"),
        verified_at_in_model=has("email_verified_at"),
        image_in_model=has("image"),
        created=next((f for f in ("created_at", "date_joined") if has(f)), None),
        updated="updated_at" if has("updated_at") else None,
        own=issubclass(model, AbstractAuthUser),
    )


def _layout_of(user):
    return layout(type(user)._meta.concrete_model)


# --- reading ----------------------------------------------------------------------------------------
def normalize_email(email):
    """How addresses are stored and compared: stripped and lower-cased (better-auth does the same)."""
    return (email or "").strip().lower()


def email_field():
    return layout().email


def email_of(user):
    return getattr(user, _layout_of(user).email) or ""


def profile_of(user):
    """``user``'s AuthProfile, created on first use (users made before authservice was added).

    One query the first time per instance (none when prefetched or cached), never more.
    """
    from authservice.models import AuthProfile

    try:
        return user.auth_profile
    except AuthProfile.DoesNotExist:
        pass
    created_at = getattr(user, _layout_of(user).created or "", None) or timezone.now()
    profile, _ = AuthProfile.objects.get_or_create(user=user, defaults={
        "created_at": created_at, "updated_at": created_at})
    user.auth_profile = profile
    return profile


def name_of(user):
    where = _layout_of(user).name
    if where == "field":
        return user.name
    if where == "first_last":
        return user.get_full_name() if hasattr(user, "get_full_name") else \
            f"{user.first_name} {user.last_name}".strip()
    return profile_of(user).name


def is_email_verified(user):
    if _layout_of(user).verified_in_model:
        return bool(user.email_verified)
    return profile_of(user).email_verified


def email_verified_at_of(user):
    """When control of ``user``'s address was first proven, or None (flows/email_proof.py)."""
    if _layout_of(user).verified_at_in_model:
        return user.email_verified_at
    return profile_of(user).email_verified_at


def image_of(user):
    return user.image if _layout_of(user).image_in_model else profile_of(user).image


def created_at_of(user):
    field = _layout_of(user).created
    return getattr(user, field) if field else profile_of(user).created_at


def updated_at_of(user):
    field = _layout_of(user).updated
    return getattr(user, field) if field else profile_of(user).updated_at


def to_wire(user):
    """better-auth's user object for ``user`` (core.md §6.1). Extend it here, not in the callers."""
    if _layout_of(user).own:
        # Every field on the row: get-session's path reads attributes only, as before.
        record = {
            "id": str(user.pk),
            "name": user.name,
            "email": user.email,
            "emailVerified": user.email_verified,
            "image": user.image,
            "createdAt": wire.iso(user.created_at),
            "updatedAt": wire.iso(user.updated_at),
        }
    else:
        record = {
            "id": str(user.pk),
            "name": name_of(user),
            "email": email_of(user),
            "emailVerified": is_email_verified(user),
            "image": image_of(user),
            "createdAt": wire.iso(created_at_of(user)),
            "updatedAt": wire.iso(updated_at_of(user)),
        }
    if app_settings.two_factor.enabled:
        record["twoFactorEnabled"] = two_factor_enabled_of(user)
    if additional_fields.declared():
        # The profile is read only when a returned field lives there.
        record.update(additional_fields.wire_values(user, lambda: profile_of(user).data))
    return record


def two_factor_enabled_of(user):
    """better-auth's ``twoFactorEnabled``: a column of our own model (no query), else the profile's."""
    if has_concrete_field(type(user)._meta.concrete_model, "two_factor_enabled"):
        return bool(user.two_factor_enabled)
    return profile_of(user).two_factor_enabled


def set_two_factor_enabled(user, value):
    from authservice.models import AuthProfile

    model = type(user)._meta.concrete_model
    if has_concrete_field(model, "two_factor_enabled"):
        model._default_manager.filter(pk=user.pk).update(two_factor_enabled=value)
        user.two_factor_enabled = value
    else:
        profile = profile_of(user)
        AuthProfile.objects.filter(pk=profile.pk).update(two_factor_enabled=value)
        profile.two_factor_enabled = value


def _profile_has_two_factor():
    return app_settings.two_factor.enabled and not has_concrete_field(get_user_model(), "two_factor_enabled")


def with_users(queryset, path):
    """``queryset.select_related(path)``, with the users' profiles too where :func:`to_wire` reads them."""
    if layout().needs_profile or additional_fields.any_in_profile() or _profile_has_two_factor():
        return queryset.select_related(path, f"{path}__auth_profile")
    return queryset.select_related(path)


# --- finding ----------------------------------------------------------------------------------------
def _exactly(email):
    """The users whose stored address is ``email`` lower-cased: one indexed equality."""
    return get_user_model()._default_manager.filter(**{layout().email: normalize_email(email)})


def _holders(email):
    """The users holding ``email``, whatever the case each stored it in.

    Our own model stores addresses lower-case, so one exact (indexed) equality finds them. Another model
    may hold them as typed (``Victim@Example.com``): one case-insensitive match, never an exact match
    first, which would let a later ``victim@example.com`` row shadow the older owner.
    """
    if layout().own:
        return _exactly(email)
    return get_user_model()._default_manager.filter(**{f"{layout().email}__iexact": (email or "").strip()})


def _oldest_first():
    """Creation time when the model records it, then the primary key: a deterministic "oldest"."""
    created = layout().created
    return (created, "pk") if created else ("pk",)


def find_by_email(email):
    """The user with ``email`` (any case), or None.

    Where a model lets several users share an address (authservice.W020), the oldest of them owns it,
    whatever case each stored it in: every flow that finds "the" account by address (sign-in, password
    reset, verification, social and SSO linking) lands on that one, never on a newer look-alike.
    """
    if not email:
        return None
    if layout().own:
        return _exactly(email).first()  # unique, stored lower-case: the indexed hot path
    return _holders(email).order_by(*_oldest_first()).first()


def email_taken(email, exclude=None):
    """Whether a user other than ``exclude`` has ``email`` (any case)."""
    holders = _holders(email)
    if exclude is not None:
        holders = holders.exclude(pk=exclude.pk)
    return holders.exists()


def find_by_pk(value):
    """The user whose primary key is ``value`` (as the wire and tokens carry it, a string), or None.

    A value that cannot be such a key (a made-up id for an integer key) finds nobody rather than raising.
    """
    if value in (None, ""):
        return None
    model = get_user_model()
    try:
        value = model._meta.pk.to_python(value)
    except (ValidationError, ValueError, TypeError):
        return None
    return model._default_manager.filter(pk=value).first()


def lock(user):
    """Hold ``user``'s row until the transaction ends; the password hash stored now (None: no such user).

    The race every retirement of a way in must win (I1, I9): a sign-in that checked the password, or a
    passkey registration that checked its session, writes its session or passkey after a reset, proof or
    revocation it did not see. So both sides take this lock first: a writer that got it before the
    retirement is seen by it; one that got it after sees the new password, the ended session. Inside a
    transaction only (SQLite, which has no row locks, runs one writer at a time anyway).
    """
    rows = get_user_model()._default_manager.select_for_update().filter(pk=user.pk)
    return rows.values_list("password", flat=True).first()


# --- writing ----------------------------------------------------------------------------------------
def _split_name(user, name):
    first, _, last = (name or "").strip().partition(" ")
    meta = type(user)._meta
    return {"first_name": first[:meta.get_field("first_name").max_length or None],
            "last_name": last.strip()[:meta.get_field("last_name").max_length or None]}


def _assign(user, changes):
    """Set ``changes`` (better-auth names) on ``user`` or its profile: (model fields, profile fields)."""
    where = _layout_of(user)
    model_fields, profile_fields = [], []
    for key, value in changes.items():
        if key == "email":
            setattr(user, where.email, value)
            model_fields.append(where.email)
        elif key == "name" and where.name == "field":
            user.name = value
            model_fields.append("name")
        elif key == "name" and where.name == "first_last":
            for field, part in _split_name(user, value).items():
                setattr(user, field, part)
                model_fields.append(field)
        elif (key == "email_verified" and where.verified_in_model or key == "image" and where.image_in_model
              or key == "email_verified_at" and where.verified_at_in_model):
            setattr(user, key, value)
            model_fields.append(key)
        elif key in ("name", "email_verified", "email_verified_at", "image"):
            setattr(profile_of(user), key, value)
            profile_fields.append(key)
        else:
            setattr(user, key, value)
            model_fields.append(key)
    return model_fields, profile_fields


def update(user, additional=None, **changes):
    """Change ``changes`` (keys of :data:`CHANGEABLE`, or model fields such as ``password``) and
    ``additional`` (declared additional fields by wire name), and touch ``updatedAt``. For our own
    model this is one ``save(update_fields=[..., "updated_at"])``, as before."""
    where = _layout_of(user)
    if changes.get("email_verified") and "email_verified_at" not in changes and email_verified_at_of(user) is None:
        changes["email_verified_at"] = timezone.now()  # the first proof of the address
    model_fields, profile_fields = _assign(user, changes)
    if additional:
        in_model, in_profile = additional_fields.split(additional)
        for name, value in in_model.items():
            setattr(user, name, value)
            model_fields.append(name)
        if in_profile:
            profile = profile_of(user)
            profile.data = {**profile.data, **in_profile}
            profile_fields.append("data")
    if where.updated:
        model_fields.append(where.updated)
    with transaction.atomic(savepoint=False):
        if model_fields:
            user.save(update_fields=model_fields)
        if where.updated is None:
            profile = profile_of(user)
            profile.updated_at = timezone.now()
            profile.save(update_fields=[*profile_fields, "updated_at"])
        elif profile_fields:
            profile_of(user).save(update_fields=profile_fields)


@dataclass
class NewUser:
    """An unsaved user as :func:`build` fills it, and what :func:`save` stores with it."""

    user: Any
    profile: Any  # its AuthProfile, or None where none is kept
    credential: bool  # whether it gets the credential account (it has a password)


def build(*, email, name="", image=None, email_verified=False, password=None, password_hash=None,
          additional=None, **extra):
    """An unsaved user (and profile) filled exactly as :func:`create` stores one; nothing is saved.

    Sign-up's made-up user is built here too (:func:`made_up`), so every normalisation a new user's
    fields get (the name split, stripped and cut for first/last-name models, additional fields'
    defaults) shows on it as on a real one (I7).
    """
    from authservice.adapter import get_adapter
    from authservice.models import AuthProfile

    model, where = get_user_model(), layout()
    user = model(**{where.email: normalize_email(email)}, **extra)
    now = timezone.now()
    if where.created and where.created != "date_joined" and where.created not in extra:
        setattr(user, where.created, now)
    in_model, in_profile = additional_fields.split(additional_fields.with_defaults(additional or {}))
    for field_name, value in in_model.items():
        setattr(user, field_name, value)
    profile = AuthProfile(user=user, created_at=now, updated_at=now, data=in_profile) \
        if where.needs_profile or additional_fields.any_in_profile() else None
    if profile is not None:
        user.auth_profile = profile
    _assign_new(user, where, name=name or "", image=image, email_verified=bool(email_verified),
                email_verified_at=now if email_verified else None)
    if password_hash is not None:
        user.password = password_hash
    elif password is not None:
        user.set_password(password)
    else:
        user.set_unusable_password()
    if model.USERNAME_FIELD != where.email and not getattr(user, model.USERNAME_FIELD, None):
        get_adapter().populate_username(user)
    return NewUser(user, profile, credential=password is not None or password_hash is not None)


def save(new):
    """Store a :func:`build` result: the user, its profile, its credential account. Returns the user."""
    from authservice.models import Account

    user = new.user
    with transaction.atomic(savepoint=False):
        user.save(force_insert=True)
        if new.profile is not None:
            new.profile.user = user
            new.profile.save(force_insert=True)
        if new.credential:
            Account.objects.create(provider_id=Account.CREDENTIAL, account_id=user.pk, user=user)
    return user


def create(**fields):
    """Create and save a user (with its profile where the model needs one): :func:`build` then :func:`save`.

    ``password`` is hashed here; ``password_hash`` is one hashed already (sign-up hashes before it
    looks the address up). Without either the user has no usable password. A user with a password
    gets the credential account better-auth keeps it on. ``additional`` are declared additional
    fields by wire name; the others get their defaults. Other keywords are model fields (``is_active``).
    Raises IntegrityError when the address (or the username) is taken; callers decide the answer.
    """
    return save(build(**fields))


def made_up(new, pk):
    """``new`` (from :func:`build`) as :func:`save` would leave it, keyed ``pk`` but never stored: what
    sign-up's made-up user is rendered from with :func:`to_wire`."""
    user = new.user
    user.pk = type(user)._meta.pk.to_python(pk)
    for field in user._meta.concrete_fields:
        # What save() would stamp (an auto_now updated_at); other pre_save hooks (files) are left alone.
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            field.pre_save(user, add=True)
    return user


def _assign_new(user, where, **values):
    """``_assign`` for an unsaved user: the profile is the one just made, nothing is saved."""
    for key, value in values.items():
        if key == "name" and where.name == "first_last":
            for field, part in _split_name(user, value).items():
                setattr(user, field, part)
        elif key == "name" and where.name == "field" or key == "email_verified" and where.verified_in_model \
                or key == "image" and where.image_in_model or key == "email_verified_at" and where.verified_at_in_model:
            setattr(user, key, value)
        elif key != "name" or value:
            setattr(user.auth_profile, key, value)


# --- usernames --------------------------------------------------------------------------------------
def username_is_free(username):
    model = get_user_model()
    return not model._default_manager.filter(**{f"{model.USERNAME_FIELD}__iexact": username}).exists()


def username_max_length():
    model = get_user_model()
    field = model._meta.get_field(model.USERNAME_FIELD)
    return getattr(field, "max_length", None) or 150

