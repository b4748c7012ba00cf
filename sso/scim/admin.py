"""SCIM connections, users and groups in Django admin (imported by ``sso.admin``).

A new token is shown once, on a page of its own answered by the action itself (never a flash
message, which Django may keep in a cookie), with ``Cache-Control: no-store`` (I10).
"""

from django.contrib import admin, messages
from django.http import HttpResponse
from django.utils.html import format_html, format_html_join

from sso.scim import tokens
from sso.scim.models import ScimConnection, ScimGroup, ScimUser


@admin.register(ScimConnection)
class ScimConnectionAdmin(admin.ModelAdmin):
    list_display = ("provider", "organization", "token_state", "token_created_at", "last_used_at", "user_count",
                    "created_at")
    search_fields = ("provider__provider_id",)
    fields = ("provider", "token_state", "token_created_at", "token_created_by", "last_used_at", "created_at")
    readonly_fields = ("token_state", "token_created_at", "token_created_by", "last_used_at", "created_at")
    raw_id_fields = ("provider",)
    actions = ("generate_token", "revoke_token")

    @admin.display(description="organization")
    def organization(self, obj):
        return obj.provider.organization_id or "-"

    @admin.display(description="token")
    def token_state(self, obj):
        return f"live (…{obj.token_hint})" if obj.token_hash else "none (revoked or never issued)"

    @admin.display(description="users")
    def user_count(self, obj):
        return obj.users.filter(deleted=False).count()

    # A token is a credential over every provisioned person of the organization: issuing or revoking one
    # is a change, never offered to a view-only (auditor) user.
    @admin.action(description="Generate a new token (shown once; the old one stops working)",
                  permissions=("change",))
    def generate_token(self, request, queryset):
        rows = [(connection.provider.provider_id, tokens.issue(connection.provider, user=request.user)[1])
                for connection in queryset.select_related("provider")]
        body = format_html(
            "<!doctype html><title>SCIM tokens</title><h1>New SCIM tokens</h1>"
            "<p>Copy each token into the IdP's provisioning settings now: it is not shown again.</p>"
            "<table>{}</table><p><a href=\"\">Back</a></p>",
            format_html_join("", "<tr><th>{}</th><td><code>{}</code></td></tr>", rows))
        response = HttpResponse(body)
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Revoke the token", permissions=("change",))
    def revoke_token(self, request, queryset):
        for connection in queryset:
            tokens.revoke(connection)
        self.message_user(request, f"{queryset.count()} token(s) revoked", messages.SUCCESS)


class _ReadOnly(admin.ModelAdmin):
    """What the directory owns is changed by the directory: viewable here, not editable."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ScimUser)
class ScimUserAdmin(_ReadOnly):
    list_display = ("user_name", "connection", "external_id", "active", "deleted", "updated_at")
    list_filter = ("active", "deleted")
    search_fields = ("user_name_key", "external_id", "email_key")
    raw_id_fields = ("user", "connection")


@admin.register(ScimGroup)
class ScimGroupAdmin(_ReadOnly):
    list_display = ("display_name", "connection", "external_id", "updated_at")
    search_fields = ("display_name_key", "external_id")
    raw_id_fields = ("connection",)
