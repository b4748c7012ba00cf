"""SSO providers, organizations and members (sso.md §1, §8.1).

Column names follow better-auth's ``ssoProvider``, ``organization`` and ``member`` tables in snake_case.
The session's ``activeOrganizationId`` lives in :class:`SessionOrganization`, a one-to-one side table,
because the session model belongs to the core app.
"""

import hashlib
import json

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from authservice import db
from authservice.errors import APIError
from authservice.models import Session
from authservice.tokens import generate_id
from sso import app_settings, hostnames

# Config keys that hold secrets: never returned, never fingerprinted, never shown in admin.
SECRET_KEYS = frozenset({
    "clientSecret", "privateKey", "privateKeyPass", "encPrivateKey", "encPrivateKeyPass",
})


def strip_secrets(value):
    """A deep copy of a config without any secret key, at any depth."""
    if isinstance(value, dict):
        return {key: strip_secrets(item) for key, item in value.items() if key not in SECRET_KEYS}
    if isinstance(value, list):
        return [strip_secrets(item) for item in value]
    return value


class SsoProviderQuerySet(models.QuerySet):
    def update(self, **kwargs):
        if "provider_id" in kwargs:  # the same rule as SsoProvider.save, for the bulk paths
            raise ValueError(IMMUTABLE_PROVIDER_ID)
        return super().update(**kwargs)

    def bulk_update(self, objs, fields, *args, **kwargs):
        if "provider_id" in fields:
            raise ValueError(IMMUTABLE_PROVIDER_ID)
        return super().bulk_update(objs, fields, *args, **kwargs)


# Accounts are keyed by (provider_id, account_id), not by the row (authservice/flows/external_identity.py):
# a renamed row would leave its accounts to whatever next has the old id, such as a settings or social
# provider the row was in conflict with (I1, attack pass 14e). A conflict is resolved by deletion only.
IMMUTABLE_PROVIDER_ID = ("The provider_id of a saved SSO provider cannot be changed: its accounts are keyed by "
                         "it. Delete the provider instead (its linked accounts are deleted with it).")


class SsoProvider(models.Model):
    OIDC = "oidc"
    SAML = "saml"

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    provider_id = models.CharField(max_length=255, unique=True)
    # The OIDC issuer, or for SAML the SP entity ID.
    issuer = models.TextField()
    # One domain or a comma-separated list.
    domain = models.TextField()
    oidc_config = models.JSONField(null=True, blank=True)
    saml_config = models.JSONField(null=True, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_providers")
    # No foreign key, as in better-auth: the provider outlives a deleted organization's id.
    organization_id = models.CharField(max_length=32, null=True, blank=True, db_index=True)
    domain_verified = models.BooleanField(default=False)
    # {"roleMapping": {"attribute", "values", "defaultRole"}}: organization roles from the IdP's
    # groups (issue 14 §4, sso/roles.py). Not a secret, not part of the identity (fingerprint).
    organization_provisioning = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    objects = SsoProviderQuerySet.as_manager()

    class Meta:
        verbose_name = "SSO provider"
        ordering = ("created_at",)

    def __str__(self):
        return self.provider_id

    @classmethod
    def from_db(cls, db, field_names, values, **kwargs):
        # **kwargs: Django 6.1 passes fetch_mode (and warns about an override that cannot take it).
        instance = super().from_db(db, field_names, values, **kwargs)
        # What the domain index was built from, so a save that leaves the domain alone skips it.
        instance._indexed_domain = instance.__dict__.get("domain", models.DEFERRED)
        instance._saved_verified = instance.__dict__.get("domain_verified", models.DEFERRED)
        instance._saved_provider_id = instance.__dict__.get("provider_id", models.DEFERRED)
        return instance

    def save(self, *args, **kwargs):
        """Save, and keep :class:`SsoProviderDomain` in step (one path for every writer: register,
        update, admin, commands, fixtures).

        - A changed ``domain`` column writes only the difference: a domain that stays keeps its state
          and token, a new one starts pending (issue 14 §3), a removed one goes; ``domain_verified`` is
          then recomputed from the rows.
        - ``domain_verified`` written directly (the admin's checkbox, a fixture, a default provider)
          is the summary "every domain is verified": True marks every row verified, False un-verifies
          them.
        - A save of a loaded row writes ``domain`` and ``domain_verified`` only when this copy changed
          them (I1). Another request may have changed the list meanwhile (a new domain, pending, the
          flag recomputed to False); writing them back from a stale copy would undo that and leave
          the flag saying "all verified" over a pending row.
        - The flag is always recomputed from the rows, with the provider row locked: it is a summary,
          never a source of trust (routing, linking and claims read each row's own status).
        """
        self._refuse_if_from_settings()
        update_fields = kwargs.get("update_fields")
        self._refuse_provider_id_change(update_fields)
        stale = ((update_fields is None or "domain" in update_fields)
                 and getattr(self, "_indexed_domain", None) != self.domain)
        flag_written = ((update_fields is None or "domain_verified" in update_fields)
                        and getattr(self, "_saved_verified", None) != self.domain_verified)
        inserting = self._state.adding or not hasattr(self, "_indexed_domain")
        if not inserting and not kwargs.get("force_insert"):
            kwargs["update_fields"] = self._fields_to_write(update_fields, stale, flag_written)
        if not stale and not flag_written:
            super().save(*args, **kwargs)
            self._saved_provider_id = self.provider_id
            if not inserting:  # the flag was not written from this copy: show what the rows say
                self.domain_verified = self._saved_verified = (
                    SsoProvider.objects.filter(pk=self.pk).values_list("domain_verified", flat=True).first()
                    or False)
            return None
        with transaction.atomic(using=kwargs.get("using")):
            if not inserting:  # one writer of a provider's rows and flag at a time
                list(SsoProvider.objects.select_for_update().filter(pk=self.pk).values_list("pk", flat=True))
            super().save(*args, **kwargs)
            if stale:
                self._sync_domain_rows()
            if flag_written and (inserting or not stale):
                self._mark_all(self.domain_verified)
            self.refresh_domain_verified()
        self._indexed_domain, self._saved_verified = self.domain, self.domain_verified
        self._saved_provider_id = self.provider_id
        return None

    def delete(self, *args, **kwargs):
        self._refuse_if_from_settings()
        return super().delete(*args, **kwargs)

    def _refuse_provider_id_change(self, update_fields):
        if self._state.adding or (update_fields is not None and "provider_id" not in update_fields):
            return
        saved = getattr(self, "_saved_provider_id", models.DEFERRED)
        if saved is models.DEFERRED:  # loaded without the column, or built by hand with a stored pk
            saved = SsoProvider.objects.filter(pk=self.pk).values_list("provider_id", flat=True).first()
        if saved is not None and saved != self.provider_id:
            raise ValueError(IMMUTABLE_PROVIDER_ID)

    def _refuse_if_from_settings(self):
        # A provider built from AUTHSERVICE_SSO["default_sso"] (sso.default_providers) is the
        # operator's; writing it would create a row that the settings shadow anyway.
        if getattr(self, "from_settings", False):
            raise TypeError(f"SSO provider {self.provider_id!r} comes from settings and is read-only")

    def _fields_to_write(self, update_fields, stale, flag_written):
        """The columns a save of a loaded row writes: those asked for, less ``domain`` and
        ``domain_verified`` unless this copy changed them (see :meth:`save`)."""
        names = ([field.name for field in self._meta.concrete_fields if not field.primary_key]
                 if update_fields is None else list(update_fields))
        skip = ({"domain"} if not stale else set()) | ({"domain_verified"} if not flag_written else set())
        return [name for name in names if name not in skip]

    def _sync_domain_rows(self):
        wanted = hostnames.indexable(self.domain)
        rows = SsoProviderDomain.objects.filter(provider=self)
        rows.exclude(domain__in=wanted).delete()
        kept = set(rows.values_list("domain", flat=True))
        SsoProviderDomain.objects.bulk_create(
            [SsoProviderDomain(provider=self, domain=host, position=position)
             for position, host in enumerate(wanted) if host not in kept])
        for position, host in enumerate(wanted):
            if host in kept:
                rows.filter(domain=host).update(position=position)

    def _mark_all(self, verified):
        rows = SsoProviderDomain.objects.filter(provider=self)
        if verified:
            rows.exclude(status=SsoProviderDomain.VERIFIED).update(
                status=SsoProviderDomain.VERIFIED, verified_at=timezone.now(), record_missing_since=None)
        else:
            rows.filter(status=SsoProviderDomain.VERIFIED).update(status=SsoProviderDomain.PENDING,
                                                                  verified_at=None)

    def refresh_domain_verified(self):
        """``domain_verified`` = every domain of the list is verified (docs/sso-domains.md).

        The column keeps better-auth's meaning ("the provider's domain is verified"): a client that
        shows it never sees "verified" while one of its domains is still pending. What sign-in trusts
        is decided per domain (:meth:`trusted_domains`), never by this flag. Callers that race other
        writers hold the provider row locked (``select_for_update``) around this.
        """
        statuses = list(SsoProviderDomain.objects.filter(provider=self).values_list("status", flat=True))
        value = bool(statuses) and all(status == SsoProviderDomain.VERIFIED for status in statuses)
        self.domain_verified = self._saved_verified = value
        SsoProvider.objects.filter(pk=self.pk).update(domain_verified=value)
        return value

    def is_default(self):
        """A provider built from a ``default_sso`` item (sso.default_providers), never a database row.

        A row whose id a settings item names gains no trust from it: an ordinary user may have
        registered that id before the deployment named it, and could then list any domain on it.
        """
        return bool(getattr(self, "from_settings", False))

    def domain_trusted(self):
        """True when sign-in may go through this provider at all (sso.md §7 gate, I1): at least one of
        its domains is verified, or it is a default provider from settings, which counts as verified.
        Which e-mail domains it vouches for is :meth:`trusted_domains`. Read from the rows, never
        from ``domain_verified``: the flag is a summary and may be stale."""
        if self.is_default():
            return True
        # Compiled once (authservice.db): this runs before every SSO sign-in and ACS request.
        return db.get_row(SsoProviderDomain, provider_id=self.pk, status=SsoProviderDomain.VERIFIED) is not None

    def verified_domains(self):
        """The hostnames whose DNS check passed (issue 14 §3), in list order: each row's own status,
        never the provider-wide flag (I1)."""
        return db.values(SsoProviderDomain, "domain", order_by=("position", "id"), provider_id=self.pk,
                         status=SsoProviderDomain.VERIFIED)

    def trusted_domains(self):
        """The hostnames sign-in may trust this provider for: all of them for a default provider,
        else the verified ones only (I1)."""
        return self.domains() if self.is_default() else self.verified_domains()

    @property
    def type(self):
        return self.SAML if self.saml_config else self.OIDC

    def domains(self):
        """The provider's hostnames as routing matches them: lower-case ASCII (IDNA), a URL-form entry
        reduced to its host, invalid entries left out (sso.hostnames.indexable)."""
        return hostnames.indexable(self.domain)

    def matches_email_domain(self, email_domain):
        """True when ``email_domain`` is one of the provider's domains or a subdomain of one."""
        try:
            email_domain = hostnames.hostname(email_domain or "")
        except APIError:
            return False
        return any(email_domain == d or email_domain.endswith("." + d) for d in self.domains())

    def fingerprint(self):
        """SHA-256 of the identity-relevant configuration, secrets excluded (sso.md §1 providerRef).

        A callback whose state carries another fingerprint started against a provider that was
        replaced or reconfigured since, and is rejected.
        """
        canonical = json.dumps({
            "issuer": self.issuer,
            "domain": self.domain,
            "domainVerified": bool(self.domain_verified),
            "organizationId": self.organization_id,
            "oidcConfig": strip_secrets(self.oidc_config),
            "samlConfig": strip_secrets(self.saml_config),
        }, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def provider_ref(self):
        return {"providerId": self.provider_id, "rowId": self.pk, "fingerprint": self.fingerprint()}


class SsoProviderDomain(models.Model):
    """One hostname of a provider's domain list: its verification state, and the index routing by
    domain or e-mail reads (I6).

    Matching a sign-in's domain is then ``domain IN (its suffixes)``, at most 127 exact values on a
    B-tree index, instead of a ``LIKE`` per suffix over the comma-separated column. Rows follow the
    ``domain`` column: :meth:`SsoProvider.save` adds and removes them whenever it changes (a kept
    domain keeps its state); deleting the provider cascades.

    Each domain is verified on its own (issue 14 §3): its own token, published as the TXT record
    ``_auth-token-{providerId}.{domain}``, and its own state. Only a ``verified`` row routes, links or
    creates users (I1). ``verify-domain`` refuses a hostname another provider already verified
    (``DOMAIN_CLAIMED``, checked again with every provider's row of that hostname locked). That is no
    database constraint: rows that fixtures or the admin mark verified in bulk may share a hostname,
    and routing then picks the oldest provider, as before.
    """

    PENDING = "pending"
    VERIFIED = "verified"
    FAILED = "failed"
    STATUSES = ((PENDING, "pending"), (VERIFIED, "verified"), (FAILED, "failed"))

    provider = models.ForeignKey(SsoProvider, on_delete=models.CASCADE, related_name="domain_entries")
    # Lower-case ASCII (IDNA) hostname, as sso.hostnames.hostname() returns it.
    domain = models.CharField(max_length=253, db_index=True)
    # Place in the provider's list: the first domain is the one better-auth's single token answers for.
    position = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING)
    # The value to publish; not a secret (it is public in DNS once published), kept after verification
    # so ``sso_verify_domain --all`` can check the record is still there.
    token = models.CharField(max_length=64, blank=True, default="")
    token_expires_at = models.DateTimeField(null=True, blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True, help_text="When the TXT record was last looked up.")
    record_missing_since = models.DateTimeField(
        null=True, blank=True, help_text="Set when a re-check of a verified domain no longer finds its record.")

    class Meta:
        verbose_name = "SSO provider domain"
        ordering = ("position", "id")
        constraints = [models.UniqueConstraint(fields=["provider", "domain"], name="sso_provider_domain_unique")]

    def __str__(self):
        return f"{self.domain} -> {self.provider_id} ({self.status})"

    @property
    def is_verified(self):
        return self.status == self.VERIFIED


class Organization(models.Model):
    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    name = models.TextField()
    slug = models.CharField(max_length=255, unique=True)
    logo = models.TextField(null=True, blank=True)
    metadata = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("created_at",)

    def __str__(self):
        return self.slug


class Member(models.Model):
    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"

    id = models.CharField(primary_key=True, max_length=32, default=generate_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="organization_memberships")
    # "owner", "admin", "member", or a comma list of them.
    role = models.CharField(max_length=255, default=MEMBER)
    # The id of the SSO provider row whose sign-ins created this membership and keep its role in step
    # with the IdP's groups (issue 14 §4): the row id, never reused, not the providerId, which a provider
    # registered later may take again. Empty for memberships made any other way: SSO never touches them.
    managed_by = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("created_at",)
        constraints = [models.UniqueConstraint(fields=["organization", "user"], name="sso_member_unique")]

    def __str__(self):
        return f"{self.user_id} in {self.organization_id} ({self.role})"

    def roles(self):
        return [part.strip() for part in (self.role or "").split(",") if part.strip()]

    @property
    def is_owner_or_admin(self):
        return bool({self.OWNER, self.ADMIN} & set(self.roles()))


class SessionOrganization(models.Model):
    """The session's ``activeOrganizationId`` (better-auth keeps it as a session column)."""

    session = models.OneToOneField(Session, on_delete=models.CASCADE, primary_key=True,
                                   related_name="sso_organization")
    active_organization = models.ForeignKey(Organization, on_delete=models.SET_NULL, null=True, blank=True,
                                            related_name="+")

    def __str__(self):
        return f"{self.session_id} -> {self.active_organization_id}"


class SamlUsedAssertion(models.Model):
    """SAML replay tombstones, ``saml-used-assertion:<Assertion ID>`` (sso.md §1, §10 rule 1).

    The core Verification table has no unique identifier; this one does, so two processes that
    receive the same assertion race on the insert and exactly one wins.
    """

    identifier = models.CharField(max_length=255, unique=True)
    provider_id = models.CharField(max_length=255)
    expires_at = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "used SAML assertion"

    def __str__(self):
        return self.identifier


class SamlSession(models.Model):
    """What SAML Single Logout needs of a session an ACS opened (docs/saml-slo.md): which provider,
    the NameID and the SessionIndex of the Assertion. A one-to-one side table, as
    :class:`SessionOrganization`, because the session model belongs to the core app.

    An IdP's LogoutRequest names (NameID, SessionIndex) for its provider; the sessions it ends are
    found through ``(provider, name_id)`` only, so one provider's IdP never reaches another's users.

    The NameID and SessionIndex are stored whole (what was verified is what is compared, I2): a
    truncated NameID is another identifier, and two NameIDs sharing a prefix would be logged out
    together. The NameID is the IdP's to choose and unbounded, so it is not indexed itself: a B-tree
    row has a byte bound (2704 bytes on PostgreSQL, a sign-in 503 past it). The index is on
    ``name_id_digest``, the SHA-256 of the NameID (:meth:`digest`, kept by :meth:`save`); a lookup
    filters on the digest *and* the NameID, so a digest alone never decides.
    """

    session = models.OneToOneField(Session, on_delete=models.CASCADE, primary_key=True, related_name="sso_saml")
    provider = models.ForeignKey(SsoProvider, on_delete=models.CASCADE, related_name="+")
    name_id = models.TextField()
    name_id_digest = models.CharField(max_length=64, editable=False)
    session_index = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "SAML session"
        indexes = [models.Index(fields=("provider", "name_id_digest"), name="sso_saml_session_name_id_dg")]

    def __str__(self):
        return f"{self.session_id} <- {self.name_id[:64]}"

    @staticmethod
    def digest(name_id):
        """The indexed form of a NameID: its SHA-256, hex (64 characters whatever the NameID's size)."""
        return hashlib.sha256(name_id.encode("utf-8")).hexdigest()

    @classmethod
    def of_name_id(cls, provider, name_id):
        """The records ``provider``'s IdP opened for exactly ``name_id`` (through the digest's index)."""
        return cls.objects.filter(provider=provider, name_id_digest=cls.digest(name_id), name_id=name_id)

    def save(self, *args, **kwargs):
        self.name_id_digest = self.digest(self.name_id)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "name_id" in update_fields:
            kwargs["update_fields"] = {*update_fields, "name_id_digest"}
        super().save(*args, **kwargs)


# SCIM's models live with the rest of SCIM; imported here so Django registers them in this app.
from sso.scim.models import ScimConnection, ScimGroup, ScimGroupMember, ScimUser  # noqa: E402, F401
