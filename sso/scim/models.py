"""SCIM connections and the resources they provisioned, each scoped to one connection.

Every query of the protocol starts from the connection the bearer token authenticated, so a token of
connection A reaches no row of connection B (docs/scim.md, tests/security/test_scim_isolation.py).
Imported by ``sso.models`` so Django finds the models in the ``sso`` app.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from authservice.tokens import generate_id


class ScimConnection(models.Model):
    """The SCIM connection of one SSO provider (and, through it, of the provider's organization)."""

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    provider = models.OneToOneField("sso.SsoProvider", on_delete=models.CASCADE, related_name="scim_connection")
    # SHA-256 (hex) of the bearer token; None once revoked. The token itself is shown once, never stored.
    token_hash = models.CharField(max_length=64, null=True, blank=True, unique=True, editable=False)
    # The token's last characters, so an administrator can tell which one the IdP holds (I10: not enough
    # to guess it).
    token_hint = models.CharField(max_length=8, blank=True, default="", editable=False)
    token_created_at = models.DateTimeField(null=True, blank=True, editable=False)
    token_created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                         related_name="+", editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "SCIM connection"
        ordering = ("created_at",)

    def __str__(self):
        return f"SCIM for {self.provider_id}"

    @property
    def organization_id(self):
        return self.provider.organization_id


class ScimUser(models.Model):
    """A SCIM User resource: an ordinary user (``AUTH_USER_MODEL``) as this connection provisioned it.

    ``resource`` keeps the attributes as the client sent them (RFC 7643 §3: what a GET returns); the
    other columns are what filters and uniqueness read, indexed per connection. A DELETE keeps the row
    (``deleted``) so a later POST of the same userName finds the same user again.
    """

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    connection = models.ForeignKey(ScimConnection, on_delete=models.CASCADE, related_name="users")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scim_users")
    # userName is caseExact=false (RFC 7643 §4.1.1): unique and matched on its lower-case form.
    user_name = models.CharField(max_length=255)
    user_name_key = models.CharField(max_length=255)
    external_id = models.CharField(max_length=255, null=True, blank=True)
    display_name_key = models.CharField(max_length=255, blank=True, default="")  # lower-case
    # The lower-case work (else primary, else first) e-mail: the user's address.
    email_key = models.CharField(max_length=254, blank=True, default="")
    active = models.BooleanField(default=True)
    # Whether SCIM itself turned the user's ``is_active`` off (true -> false, or created them off): only
    # then may the directory turn them on again. ``is_active`` is one bit the site shares (an admin's
    # ban, a security lock); the resource's ``active`` says what the directory wants, not who decided.
    deactivated_by_scim = models.BooleanField(default=False)
    deleted = models.BooleanField(default=False)
    resource = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "SCIM user"
        ordering = ("created_at", "id")
        constraints = [
            models.UniqueConstraint(fields=["connection", "user_name_key"], name="sso_scim_user_name_unique"),
            models.UniqueConstraint(fields=["connection", "user"], name="sso_scim_user_unique"),
        ]
        indexes = [
            models.Index(fields=["connection", "external_id"], name="sso_scim_user_external_id"),
            models.Index(fields=["connection", "email_key"], name="sso_scim_user_email"),
            models.Index(fields=["connection", "display_name_key"], name="sso_scim_user_display_name"),
            # A list's total and its page's ids are read from these two indexes alone (index-only scans,
            # sso/scim/paging.py), which hold only the users a list shows (deleted ones are kept as rows).
            # The total: ~7 bytes an entry (B-tree deduplication of the one repeated key), not a table scan.
            models.Index(fields=["connection"], condition=models.Q(deleted=False), name="sso_scim_user_live"),
            models.Index(fields=["connection", "created_at", "id"], condition=models.Q(deleted=False),
                         name="sso_scim_user_order"),
        ]

    def __str__(self):
        return self.user_name


class ScimUserTotal(models.Model):
    """How many not-deleted users a connection has: a list's ``totalResults`` without counting them.

    COUNT(*) steps over every index entry, ~10 ms for 100,000 users on a loaded VM (bench/README.md
    "SCIM"). On PostgreSQL, triggers on ``sso_scimuser`` (migration 0010) keep this row in the writing
    transaction, for every statement (the ORM's, bulk inserts, cascades, raw SQL), so any snapshot sees
    it agree with the rows. Other databases count (sso/scim/users.py ``total``); no row = no users.
    Cost: creating or deleting a user locks its connection's row until commit, so concurrent creates and
    deletes of one connection queue there for the rest of their transaction (a few milliseconds).
    """

    connection = models.OneToOneField(ScimConnection, on_delete=models.CASCADE, primary_key=True,
                                      related_name="user_total")
    live = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "SCIM user total"

    def __str__(self):
        return f"{self.live} users of {self.connection_id}"


class ScimGroup(models.Model):
    """A SCIM Group resource: a set of this connection's users (organization membership and role, §4)."""

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    connection = models.ForeignKey(ScimConnection, on_delete=models.CASCADE, related_name="groups")
    display_name = models.CharField(max_length=255)
    display_name_key = models.CharField(max_length=255)  # lower-case: displayName is caseExact=false
    external_id = models.CharField(max_length=255, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "SCIM group"
        ordering = ("created_at", "id")
        indexes = [
            models.Index(fields=["connection", "display_name_key"], name="sso_scim_group_display_name"),
            models.Index(fields=["connection", "external_id"], name="sso_scim_group_external_id"),
            models.Index(fields=["connection", "created_at", "id"], name="sso_scim_group_order"),
        ]

    def __str__(self):
        return self.display_name


class ScimGroupMember(models.Model):
    group = models.ForeignKey(ScimGroup, on_delete=models.CASCADE, related_name="memberships")
    member = models.ForeignKey(ScimUser, on_delete=models.CASCADE, related_name="group_memberships")
    # The member's ``display`` as the client sent it (shown back); empty = the user's userName.
    display = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        verbose_name = "SCIM group member"
        constraints = [models.UniqueConstraint(fields=["group", "member"], name="sso_scim_group_member_unique")]

    def __str__(self):
        return f"{self.member_id} in {self.group_id}"
