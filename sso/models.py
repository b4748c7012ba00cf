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
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

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
        return instance

    def save(self, *args, **kwargs):
        """Save, and keep :class:`SsoProviderDomain` in step with the ``domain`` column (one path for
        every writer: register, update, admin, commands, fixtures)."""
        update_fields = kwargs.get("update_fields")
        stale = ((update_fields is None or "domain" in update_fields)
                 and getattr(self, "_indexed_domain", None) != self.domain)
        if not stale:
            return super().save(*args, **kwargs)
        with transaction.atomic(using=kwargs.get("using")):
            super().save(*args, **kwargs)
            SsoProviderDomain.objects.filter(provider=self).delete()
            SsoProviderDomain.objects.bulk_create(
                [SsoProviderDomain(provider=self, domain=host) for host in hostnames.indexable(self.domain)])
        self._indexed_domain = self.domain
        return None

    def domain_trusted(self):
        """True when domain routing and sign-in may trust the provider's domains (sso.md §7, I1):
        its DNS check passed, or it is a default provider from settings, which counts as verified."""
        if self.domain_verified:
            return True
        return self.provider_id in default_provider_ids(app_settings.default_sso)

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


def default_provider_ids(default_sso):
    return {item.get("provider_id") or item.get("providerId") for item in default_sso or ()} - {None}


class SsoProviderDomain(models.Model):
    """One hostname of a provider's domain list: the index routing by domain or e-mail reads (I6).

    Matching a sign-in's domain is then ``domain IN (its suffixes)``, at most 127 exact values on a
    B-tree index, instead of a ``LIKE`` per suffix over the comma-separated column. Rows are derived:
    :meth:`SsoProvider.save` rewrites them whenever ``domain`` changes; deleting the provider cascades.
    """

    provider = models.ForeignKey(SsoProvider, on_delete=models.CASCADE, related_name="domain_entries")
    # Lower-case ASCII (IDNA) hostname, as sso.hostnames.hostname() returns it.
    domain = models.CharField(max_length=253, db_index=True)

    class Meta:
        verbose_name = "SSO provider domain"
        constraints = [models.UniqueConstraint(fields=["provider", "domain"], name="sso_provider_domain_unique")]

    def __str__(self):
        return f"{self.domain} -> {self.provider_id}"


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


# SCIM's models live with the rest of SCIM; imported here so Django registers them in this app.
from sso.scim.models import ScimConnection, ScimGroup, ScimGroupMember, ScimUser  # noqa: E402, F401
