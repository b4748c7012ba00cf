"""SSO providers, their domains, organizations, members and SAML sessions in Django admin.

Secrets are write-only: the config JSON is shown without them, the client secret has its own empty
password field (blank keeps the stored one), and secrets kept in the stored JSON survive an edit.
A bad config is a form error, never a 500.
"""

from urllib.parse import quote

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join
from rest_framework import serializers

from authservice import links, users
from authservice.errors import APIError
from sso import default_providers, discovery, domains, providers, roles, saml_config
from sso.models import (
    SECRET_KEYS, Member, Organization, SamlSession, SsoProvider, SsoProviderDomain, strip_secrets,
)
from sso.saml import validation as saml_validation


def _restore_secrets(stored, edited):
    """``edited`` plus every secret of ``stored`` it does not set itself, at any depth."""
    if not isinstance(stored, dict) or not isinstance(edited, dict):
        return edited
    merged = dict(edited)
    for key, value in stored.items():
        if key in SECRET_KEYS and key not in edited:
            merged[key] = value
        elif isinstance(value, dict) and isinstance(edited.get(key), dict):
            merged[key] = _restore_secrets(value, edited[key])
    return merged


class SsoProviderForm(forms.ModelForm):
    client_secret = forms.CharField(
        required=False, widget=forms.PasswordInput(render_value=False),
        help_text="OIDC client secret. Write-only: leave blank to keep the stored one.")

    class Meta:
        model = SsoProvider
        fields = ("provider_id", "issuer", "domain", "user", "organization_id", "domain_verified",
                  "organization_provisioning", "oidc_config", "client_secret", "saml_config")
        help_texts = {
            "domain_verified": "Every domain verified. Ticking it marks all of them verified without a DNS "
                               "check; each domain's own state is listed below.",
            "organization_provisioning": 'Roles from IdP groups, e.g. {"roleMapping": {"attribute": "groups", '
                                         '"values": {"it-admins": "admin"}, "defaultRole": "member"}} '
                                         "(docs/sso-roles.md).",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("oidc_config", "saml_config"):
            value = getattr(self.instance, name, None)
            if value:
                self.initial[name] = strip_secrets(value)

    def _clean_config(self, name):
        value = self.cleaned_data.get(name)
        if value in (None, "", {}):
            return None
        if not isinstance(value, dict):
            raise forms.ValidationError("Must be a JSON object.")
        return value

    def clean_provider_id(self):
        value = self.cleaned_data.get("provider_id")
        if self.instance.pk and not self.instance._state.adding:
            # Accounts are keyed by the id, not the row: a renamed row would leave them to whatever
            # next has the old id (I1). The admin shows the field read-only; this covers other uses.
            if value != self.instance.provider_id:
                raise forms.ValidationError("The providerId of a saved provider cannot be changed. To resolve "
                                            "a conflict (sso.E019), delete the row.")
            return value
        if value in default_providers.ids():
            # A row with a settings provider's id makes that provider refused (409 PROVIDER_ID_CONFLICT).
            raise forms.ValidationError("A provider in AUTHSERVICE_SSO['default_sso'] has this id.")
        try:
            # Registration's checks: the format, reserved ids, an existing row, leftover accounts.
            providers._check_provider_id(value)
        except APIError as error:
            raise forms.ValidationError(error.message) from None
        return value

    def clean_oidc_config(self):
        value = self._clean_config("oidc_config")
        if value is not None and not value.get("clientId"):
            raise forms.ValidationError("clientId is required.")
        return value

    def clean_organization_provisioning(self):
        value = self.cleaned_data.get("organization_provisioning")
        if value in (None, "", {}):
            return None
        try:
            return roles.validate_mapping(value) or None
        except serializers.ValidationError as error:
            raise forms.ValidationError(error.detail) from None

    def clean_saml_config(self):
        value = self._clean_config("saml_config")
        if value is not None:
            try:
                saml_config.check_metadata_size(value)
                saml_config.validate(value)
                # The IdP metadata XML and certificates are parsed here, as on registration.
                saml_validation.validate(value)
            except APIError as error:
                raise forms.ValidationError(error.message) from None
        return value

    def clean(self):
        cleaned = super().clean()
        oidc, saml = cleaned.get("oidc_config"), cleaned.get("saml_config")
        if not self.errors and bool(oidc) == bool(saml):
            raise forms.ValidationError("Give exactly one of the OIDC and the SAML configuration.")
        if oidc:
            try:
                discovery.check_config_endpoints(oidc)
            except APIError as error:
                self.add_error("oidc_config", error.message)
        return cleaned

    def save(self, commit=True):
        provider = super().save(commit=False)
        stored = SsoProvider.objects.filter(pk=provider.pk).first() if provider.pk else None
        if stored is not None:
            provider.oidc_config = _restore_secrets(stored.oidc_config, provider.oidc_config)
            provider.saml_config = _restore_secrets(stored.saml_config, provider.saml_config)
        secret = self.cleaned_data.get("client_secret")
        if secret and provider.oidc_config:
            provider.oidc_config = {**provider.oidc_config, "clientSecret": secret}
        if commit:
            provider.save()
        return provider


@admin.register(SsoProvider)
class SsoProviderAdmin(admin.ModelAdmin):
    form = SsoProviderForm
    list_display = ("provider_id", "provider_type", "domain_states", "domain_verified", "organization_id",
                    "user", "created_at")
    list_filter = ("domain_verified", "domain_entries__status")
    search_fields = ("provider_id", "domain", "issuer", "organization_id")
    # Read-only displays rather than an inline: the rows follow the domain field, and a formset would
    # make every edit post its management form.
    readonly_fields = ("id", "sp_metadata_url", "domain_table", "role_mapping", "created_at", "updated_at")
    raw_id_fields = ("user",)
    actions = ("rerun_discovery", "check_domain_record")

    def get_readonly_fields(self, request, obj=None):
        # provider_id is immutable once saved (SsoProvider.save): set when adding only.
        fields = super().get_readonly_fields(request, obj)
        return fields if obj is None else ("provider_id", *fields)

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        # Domain rows and SAML session records are read-only on their own but part of the provider: they
        # must not block its deletion, the one way to resolve a row in conflict (sso.E019).
        # The accounts linked through it go too (sso/row_deletion.py), though no foreign key lists them.
        parts = {str(SsoProviderDomain._meta.verbose_name), str(SamlSession._meta.verbose_name)}
        perms_needed = {name for name in perms_needed if str(name) not in parts}
        return deleted, counts, perms_needed, protected

    @admin.display(description="domains")
    def domain_states(self, obj):
        return ", ".join(f"{row.domain} ({domains.describe(obj, row)['status']})" for row in domains.rows(obj))

    @admin.display(description="domain states")
    def domain_table(self, obj):
        """Each domain's own state (issue 14 §3): the TXT record to publish, its token while pending,
        when it was verified and last checked, and since when a verified domain's record is missing."""
        if not obj.pk:
            return "-"
        header = ("domain", "state", "TXT record", "token", "verified", "last checked", "record missing since")
        rows = [(s["domain"], s["status"], s["txtRecord"], s["domainVerificationToken"] or "-",
                 s["verifiedAt"] or "-", s["checkedAt"] or "never", s["recordMissingSince"] or "-")
                for s in (domains.describe(obj, row) for row in domains.rows(obj))]
        head = format_html_join("", "<th>{}</th>", ((cell,) for cell in header))
        body = format_html_join("", "<tr>{}</tr>", (
            (format_html_join("", "<td>{}</td>", ((cell,) for cell in row)),) for row in rows))
        return format_html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, body)

    @admin.display(description="role mapping")
    def role_mapping(self, obj):
        """The groups that give each role, and the default (docs/sso-roles.md)."""
        mapping = roles.mapping_of(obj)
        if mapping is None:
            return "- (no mapping: the default role, or the get_role hook)"
        lines = [("IdP attribute / claim", mapping["attribute"])]
        lines += [(f"group {group}", role) for group, role in sorted((mapping.get("values") or {}).items())]
        lines.append(("no matching group", roles.default_role(obj)))
        return format_html_join("", "<div>{}: <b>{}</b></div>", lines)

    @admin.display(description="SP metadata URL")
    def sp_metadata_url(self, obj):
        """What to give the IdP for a SAML provider: our entity id, ACS and keys."""
        if not obj.pk or not obj.saml_config:
            return "-"
        return f"{links.base()}/sso/saml2/sp/metadata?providerId={quote(obj.provider_id)}&format=xml"

    @admin.display(description="type")
    def provider_type(self, obj):
        return obj.type

    @admin.action(description="Re-run OIDC discovery")
    def rerun_discovery(self, request, queryset):
        """Refresh the endpoints from the IdP's discovery document (explicit overrides included)."""
        for provider in queryset:
            if not provider.oidc_config:
                self.message_user(request, f"{provider}: not an OIDC provider", messages.WARNING)
                continue
            kept = {key: value for key, value in provider.oidc_config.items()
                    if key not in discovery.ENDPOINT_KEYS}
            try:
                provider.oidc_config = discovery.discover(provider.issuer, kept)
            except APIError as error:
                self.message_user(request, f"{provider}: {error.code}: {error.message}", messages.ERROR)
                continue
            provider.save(update_fields=["oidc_config", "updated_at"])
            self.message_user(request, f"{provider}: endpoints refreshed", messages.SUCCESS)

    @admin.action(description="Check the domains' TXT records (and verify)")
    def check_domain_record(self, request, queryset):
        for provider in queryset:
            try:
                domains.verify(provider)
            except APIError as error:
                self.message_user(request, f"{provider}: {error.code}: {error.message}", messages.ERROR)
                continue
            self.message_user(request, f"{provider}: domains verified", messages.SUCCESS)


class MemberInline(admin.TabularInline):
    model = Member
    extra = 0
    fields = ("user", "role", "managed_by", "created_at")
    raw_id_fields = ("user",)


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "created_at")
    search_fields = ("name", "slug", "id")
    readonly_fields = ("id",)
    inlines = [MemberInline]


@admin.register(Member)
class MemberAdmin(admin.ModelAdmin):
    list_display = ("user", "organization", "role", "managed_by", "created_at")
    list_filter = ("role", "managed_by")
    search_fields = (f"user__{users.email_field()}", "organization__slug")
    raw_id_fields = ("user", "organization")


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows another part of the service owns: viewable, never added, edited or deleted here."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(SsoProviderDomain)
class SsoProviderDomainAdmin(ReadOnlyAdmin):
    """Every provider's domains in one list: which provider verified ``acme.com``, and so which
    organization routing and membership by e-mail domain send its users to (docs/sso-domains.md).
    Read-only: the rows follow the provider's ``domain`` field and verification (edit the provider)."""

    list_display = ("domain", "provider", "organization", "status", "verified_at", "checked_at",
                    "record_missing_since")
    list_filter = ("status",)
    search_fields = ("domain", "provider__provider_id", "provider__organization_id")
    list_select_related = ("provider",)

    @admin.display(description="organization")
    def organization(self, obj):
        return obj.provider.organization_id or "-"


@admin.register(SamlSession)
class SamlSessionAdmin(ReadOnlyAdmin):
    """What SAML Single Logout keeps of each session an ACS opened (docs/saml-slo.md). Read-only: a
    session is ended by deleting it (the core's session admin), which takes this row with it."""

    list_display = ("session", "user", "provider", "short_name_id", "session_index", "created_at")
    list_select_related = ("session", "provider")
    search_fields = ("provider__provider_id", "session_index")
    list_filter = ("provider",)
    exclude = ("name_id_digest",)

    @admin.display(description="user")
    def user(self, obj):
        return obj.session.user_id

    @admin.display(description="NameID")
    def short_name_id(self, obj):
        # The IdP chooses the NameID and its length; the list shows a prefix, the page the whole value.
        return obj.name_id if len(obj.name_id) <= 80 else obj.name_id[:80] + "…"


from sso.scim import admin as scim_admin  # noqa: E402, F401 - registers the SCIM models
