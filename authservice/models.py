"""Users, sessions, accounts and verification rows (core.md §6).

The user model is swappable: projects point ``AUTH_USER_MODEL`` at ``authservice.User`` or at their
own subclass of :class:`AbstractAuthUser`. Everything else reaches it through ``get_user_model()``.
"""

import functools

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import connections, models, router
from django.utils import timezone

from authservice import hashers
from authservice.tokens import generate_id


class UserManager(BaseUserManager):
    use_in_migrations = True

    def normalize_email(self, email):
        return (email or "").strip().lower()

    def create_user(self, email, password=None, name="", **extra):
        user = self.model(email=self.normalize_email(email), name=name, **extra)
        user.set_password(password)
        user.save(using=self._db)
        # Every user with a password has a credential account, as better-auth keeps one.
        Account.objects.get_or_create(provider_id=Account.CREDENTIAL, account_id=user.pk, user=user)
        return user

    def create_superuser(self, email, password=None, name="", **extra):
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        extra.setdefault("email_verified", True)
        return self.create_user(email, password, name, **extra)


class AbstractAuthUser(AbstractBaseUser, PermissionsMixin):
    """better-auth's user record plus what Django's admin and permissions need.

    The password hash lives here (Django's habit, so ``createsuperuser`` and the admin work); the
    credential account row exists alongside it for ``/list-accounts``.
    """

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    name = models.TextField(blank=True, default="")
    email = models.EmailField(max_length=254, unique=True)
    email_verified = models.BooleanField(default=False)
    image = models.TextField(blank=True, null=True)
    # Wide enough for imported better-auth scrypt hashes (161 characters plus our prefix).
    password = models.CharField("password", max_length=255, blank=True)
    is_staff = models.BooleanField(default=False)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS = ["name"]

    class Meta:
        abstract = True

    def __str__(self):
        return self.email

    def check_password(self, raw_password):
        # A hash copied as-is from a better-auth database (``salt:key``) is verified too, and
        # re-hashed with the preferred hasher by Django's setter on success [D6].
        self.password = hashers.normalize_imported(self.password)
        return super().check_password(raw_password)

    def has_usable_password(self):
        return bool(self.password) and super().has_usable_password()


class User(AbstractAuthUser):
    class Meta(AbstractAuthUser.Meta):
        swappable = "AUTH_USER_MODEL"
        db_table = "authservice_user"


@functools.lru_cache(maxsize=None)
def _session_with_user_plan(alias):
    """The "session joined with its user, by token" SELECT, compiled once per database.

    It runs on every authenticated request; Django's query compiler cost about half of a
    get-session request's CPU (bench/README.md), and this SQL never changes.
    """
    connection = connections[alias]
    quote = connection.ops.quote_name
    columns, plan = [], []
    for model in (Session, get_user_model()):
        table = model._meta.db_table
        fields = model._meta.concrete_fields
        converters = []
        for field in fields:
            column = field.get_col(table)
            converters.append(
                (column, connection.ops.get_db_converters(column) + field.get_db_converters(connection))
            )
            columns.append(f"{quote(table)}.{quote(field.column)}")
        plan.append((model, [field.attname for field in fields], converters))
    session_table = quote(Session._meta.db_table)
    user_model = get_user_model()
    user_table = quote(user_model._meta.db_table)
    sql = (
        f"SELECT {', '.join(columns)} FROM {session_table} INNER JOIN {user_table} "
        f"ON {session_table}.{quote(Session._meta.get_field('user').column)} = "
        f"{user_table}.{quote(user_model._meta.pk.column)} "
        f"WHERE {session_table}.{quote(Session._meta.get_field('token').column)} = %s LIMIT 1"
    )
    return sql, plan


class SessionManager(models.Manager):
    def with_user(self, token):
        """The session of ``token`` with its user loaded, in one indexed query; ``None`` if unknown."""
        alias = router.db_for_read(Session)
        connection = connections[alias]
        sql, plan = _session_with_user_plan(alias)
        with connection.cursor() as cursor:
            cursor.execute(sql, [token])
            row = cursor.fetchone()
        if row is None:
            return None
        instances, start = [], 0
        for model, attnames, converters in plan:
            values = list(row[start:start + len(attnames)])
            start += len(attnames)
            for index, (column, functions) in enumerate(converters):
                for function in functions:
                    values[index] = function(values[index], column, connection)
            instances.append(model.from_db(alias, attnames, values))
        session, user = instances
        Session.user.field.set_cached_value(session, user)
        return session


class Session(models.Model):
    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    token = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="auth_sessions")
    expires_at = models.DateTimeField()
    ip_address = models.CharField(max_length=64, blank=True, default="")
    user_agent = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = SessionManager()

    class Meta:
        indexes = [models.Index(fields=["user", "expires_at"])]

    def __str__(self):
        return f"{self.user_id} until {self.expires_at:%Y-%m-%d %H:%M}"


class Account(models.Model):
    CREDENTIAL = "credential"

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    account_id = models.CharField(max_length=255)
    provider_id = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="auth_accounts")
    access_token = models.TextField(blank=True, null=True)
    refresh_token = models.TextField(blank=True, null=True)
    id_token = models.TextField(blank=True, null=True)
    access_token_expires_at = models.DateTimeField(blank=True, null=True)
    refresh_token_expires_at = models.DateTimeField(blank=True, null=True)
    scope = models.TextField(blank=True, null=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider_id", "account_id"], name="authservice_account_unique")
        ]

    def __str__(self):
        return f"{self.provider_id}:{self.account_id}"


class Verification(models.Model):
    """Single-use or expiring values: reset tokens, delete tokens, OAuth state (core.md §6.4)."""

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    identifier = models.CharField(max_length=255, db_index=True)
    value = models.TextField()
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return self.identifier.split(":", 1)[0]

    def claim(self):
        """Delete this row; True only for the one caller whose DELETE removed it.

        Single use across processes: of two requests that read the same row, only one gets True.
        """
        deleted, _ = Verification.objects.filter(pk=self.pk).delete()
        return bool(deleted)


class RateLimitCounter(models.Model):
    """Rate-limit counters when no shared cache is configured, so all processes count together [D8]."""

    key = models.CharField(max_length=128, primary_key=True)
    count = models.IntegerField(default=0)
    reset_at = models.DateTimeField()
