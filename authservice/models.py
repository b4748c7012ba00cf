"""Users, sessions, accounts and verification rows (core.md §6).

Any ``AUTH_USER_MODEL`` works: ``authservice.User`` (the example project's), a subclass of
:class:`AbstractAuthUser`, ``auth.User`` or a project's own model. :class:`AuthProfile` holds what better-auth
keeps and the project's model has no field for; ``authservice.users`` is the one module that knows where
each field lives. Everything else reaches the model through ``get_user_model()``.
"""

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models
from django.utils import timezone

from authservice import db, hashers
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
    # When control of the address was first proven (authservice.flows.email_proof); null until then.
    email_verified_at = models.DateTimeField(blank=True, null=True)
    image = models.TextField(blank=True, null=True)
    # Wide enough for imported better-auth scrypt hashes (161 characters plus our prefix).
    password = models.CharField("password", max_length=255, blank=True)
    is_staff = models.BooleanField(default=False)
    is_active = models.BooleanField(default=True)
    # better-auth's twoFactor plugin's user field; a column so get-session needs no extra query.
    two_factor_enabled = models.BooleanField(default=False)
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


class AuthProfile(models.Model):
    """better-auth's user fields that a project's own user model lacks (authservice.users).

    Unused for :class:`AbstractAuthUser` models, which carry every field themselves. Rows are
    created with the user through ``users.create`` or, for users that existed before authservice
    was added, on first use.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True,
                                related_name="auth_profile")
    name = models.TextField(blank=True, default="")  # only for models with neither name nor first/last
    email_verified = models.BooleanField(default=False)
    email_verified_at = models.DateTimeField(blank=True, null=True)  # see AbstractAuthUser
    image = models.TextField(blank=True, null=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    # AUTHSERVICE["user"]["additional_fields"] the user model has no field for, by field_name.
    data = models.JSONField(default=dict, blank=True)
    two_factor_enabled = models.BooleanField(default=False)

    class Meta:
        verbose_name = "authentication profile"

    def __str__(self):
        return str(self.user_id)


class SessionManager(models.Manager):
    def with_user(self, token):
        """The session of ``token`` with its user loaded, in one indexed query; ``None`` if unknown.

        It runs on every authenticated request, so its SQL is compiled once (``authservice.db``):
        Django's query compiler cost about half of a get-session request's CPU (bench/README.md).
        """
        return db.get_row(Session, related="user", token=token)


class Session(models.Model):
    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    token = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="auth_sessions")
    expires_at = models.DateTimeField()
    ip_address = models.CharField(max_length=64, blank=True, default="")
    user_agent = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    # How the user proved who they were ("password", "social", "sso", "passkey", "two_factor"...):
    # the MFA policy exempts SSO sessions (the IdP owns the second factor), so it must know.
    sign_in_method = models.CharField(max_length=32, default="")

    objects = SessionManager()

    class Meta:
        indexes = [
            models.Index(fields=["user", "expires_at"]),
            # authservice_cleanup finds each batch of expired sessions by it: without it every batch
            # scans the table, and 10^6 expired sessions take a scan of the table per 5,000.
            models.Index(fields=["expires_at"]),
        ]

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


class VerificationManager(models.Manager):
    def find(self, identifier):
        """The row stored under a unique ``identifier`` (a random state or request ID), or None.

        Compiled once (``authservice.db``) and unordered: ``.first()`` would add ``ORDER BY id``,
        for which PostgreSQL may walk the primary-key index filtering every row instead of using
        the identifier index (3.6 ms at 3,300 rows in the SAML benchmark, growing with the table).
        """
        return db.get_row(Verification, identifier=identifier)


class Verification(models.Model):
    """Single-use or expiring values: reset tokens, delete tokens, OAuth state (core.md §6.4)."""

    objects = VerificationManager()

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    identifier = models.CharField(max_length=255, db_index=True)
    value = models.TextField()
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # authservice_cleanup's batches find expired rows by it, not by a scan of the table each.
        indexes = [models.Index(fields=["expires_at"])]

    def __str__(self):
        return self.identifier.split(":", 1)[0]

    def claim(self):
        """Delete this row; True only for the one caller whose DELETE removed it.

        Single use across processes: of two requests that read the same row, only one gets True.
        """
        return db.delete_by_pk(Verification, self.pk)


class RateLimitCounter(models.Model):
    """Rate-limit counters when no shared cache is configured, so all processes count together [D8]."""

    key = models.CharField(max_length=128, primary_key=True)
    count = models.IntegerField(default=0)
    reset_at = models.DateTimeField()

    class Meta:
        # authservice_cleanup's batches of closed windows (a bot's addresses leave one row each).
        indexes = [models.Index(fields=["reset_at"])]


# --- two-factor authentication (authservice.two_factor) -----------------------------------------------
class TwoFactor(models.Model):
    """A user's TOTP factor: better-auth's ``twoFactor`` row, with the replay state."""

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="two_factor")
    secret = models.TextField()  # Fernet token of the base32 secret (two_factor/crypto.py)
    verified = models.BooleanField(default=False)
    # The highest TOTP time step accepted: a code is refused at or below it, so each code works once.
    last_used_step = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "two-factor (TOTP) factor"

    def __str__(self):
        return str(self.user_id)


class TwoFactorLockout(models.Model):
    """A user's budget of wrong second-factor codes across pending sign-ins, for every method.

    Its own row (made on a user's first guess), not a field of the TOTP row: a user with e-mail codes
    only has no TOTP row and was never locked. Changed only by conditional UPDATEs (two_factor/lockout.py).
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True,
                                related_name="+")
    failed_count = models.IntegerField(default=0)
    locked_until = models.DateTimeField(blank=True, null=True)


class BackupCode(models.Model):
    """One single-use backup code, stored as a keyed hash: using it is deleting its row."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="backup_codes")
    code_hash = models.CharField(max_length=64)

    class Meta:
        indexes = [models.Index(fields=["user", "code_hash"])]


class TwoFactorChallenge(models.Model):
    """A pending second-factor check: a sign-in between password and code (its id is the two_factor
    cookie), or a signed-in user's e-mail code (``session_id`` set). Counters change atomically."""

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    session_id = models.CharField(max_length=32, unique=True, blank=True, null=True)
    remember = models.BooleanField(default=True)
    attempts = models.IntegerField(default=0)
    expires_at = models.DateTimeField()
    otp_hash = models.CharField(max_length=64, blank=True, default="")
    otp_expires_at = models.DateTimeField(blank=True, null=True)
    otp_attempts = models.IntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)


class TrustedDevice(models.Model):
    """A browser that skips the second factor until ``expires_at``; deleting the row revokes it."""

    id = models.CharField(primary_key=True, max_length=64, editable=False)  # trust-device-<random>
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="trusted_devices")
    expires_at = models.DateTimeField()
    user_agent = models.TextField(blank=True, default="")
    ip_address = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["user", "expires_at"])]


class Passkey(models.Model):
    """A WebAuthn credential of a user: better-auth's passkey record (@better-auth/passkey's schema)."""

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    name = models.CharField(max_length=255, blank=True, null=True)
    # The credential's COSE public key, standard base64 as better-auth stores it.
    public_key = models.TextField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="auth_passkeys")
    # base64url of the credential ID (at most 1023 bytes, WebAuthn §5.8.3). Unique: one credential
    # belongs to one user, so an assertion names exactly one account (I1).
    credential_id = models.CharField(max_length=1400, unique=True)
    # The authenticator's signature counter; an assertion that does not raise it is a clone (refused).
    counter = models.BigIntegerField(default=0)
    # "singleDevice" or "multiDevice" (the BE flag, fixed at creation) and whether it is backed up now.
    device_type = models.CharField(max_length=32)
    backed_up = models.BooleanField(default=False)
    transports = models.CharField(max_length=255, blank=True, default="")
    aaguid = models.CharField(max_length=36, blank=True, null=True)
    created_at = models.DateTimeField(default=timezone.now)
    # The session it was registered from (not a foreign key: the session is gone long before the
    # passkey). A revocation that says "not me" (a password change or reset that ends sessions, the
    # first proof of the address) ends what those sessions registered too (docs/passkeys.md).
    created_by_session_id = models.CharField(max_length=32, blank=True, null=True, db_index=True)

    def __str__(self):
        return self.name or f"passkey {self.id}"
