"""SSO providers, organizations and members (sso.md §1, §8.1).

Column names follow better-auth's ``ssoProvider``, ``organization`` and ``member`` tables in snake_case.
The session's ``activeOrganizationId`` lives in :class:`SessionOrganization`, a one-to-one side table,
because the session model belongs to the core app.
"""

import hashlib
import json

from django.conf import settings
from django.db import models
from django.utils import timezone

from authservice.models import Session
from authservice.tokens import generate_id

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


def split_domains(domain):
    """``"a.com, B.com"`` -> ``["a.com", "b.com"]`` (the column may hold a comma list)."""
    return [part.strip().lower() for part in (domain or "").split(",") if part.strip()]


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

    @property
    def type(self):
        return self.SAML if self.saml_config else self.OIDC

    def domains(self):
        return split_domains(self.domain)

    def matches_email_domain(self, email_domain):
        """True when ``email_domain`` is one of the provider's domains or a subdomain of one."""
        email_domain = (email_domain or "").strip().lower().rstrip(".")
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
