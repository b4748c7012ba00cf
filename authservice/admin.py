"""Users, sessions and accounts in Django admin. Secrets (tokens, hashes) are never displayed.

Our :class:`UserAdmin` is registered for ``authservice.User`` only. A project with its own user model
keeps its own user admin (``auth.User``'s, or the project's); the better-auth fields its model lacks
are listed under "Authentication profiles".
"""

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from authservice import signals, users
from authservice.models import AbstractAuthUser, Account, AuthProfile, Passkey, Session, User, Verification

# Forms of our UserAdmin describe an AbstractAuthUser model: the project's own subclass if it has
# one, else authservice.User (even when swapped out, so this module imports under any user model).
_FORM_MODEL = get_user_model() if issubclass(get_user_model(), AbstractAuthUser) else User


class SessionInline(admin.TabularInline):
    model = Session
    extra = 0
    fields = ("created_at", "expires_at", "ip_address", "user_agent")
    readonly_fields = fields
    can_delete = True
    show_change_link = True


class AccountInline(admin.TabularInline):
    model = Account
    extra = 0
    fields = ("provider_id", "account_id", "scope", "created_at")
    readonly_fields = fields


def _passkey_removed(passkey, pk):
    passkey.pk = pk  # Model.delete() cleared it; receivers are told which passkey went (signals.py)
    signals.passkey_removed.send(sender=Passkey, user=passkey.user, passkey=passkey)


class _PasskeyFormSet(forms.BaseInlineFormSet):
    def delete_existing(self, obj, commit=True):
        pk = obj.pk
        super().delete_existing(obj, commit=commit)
        if commit:
            _passkey_removed(obj, pk)


class PasskeyInline(admin.TabularInline):
    """A user's passkeys; an admin deletes a lost or compromised one (the user registers it anew)."""

    model = Passkey
    formset = _PasskeyFormSet
    extra = 0
    fields = ("name", "device_type", "backed_up", "transports", "counter", "created_at")
    readonly_fields = fields
    can_delete = True

    def has_add_permission(self, request, obj=None):
        return False  # only the user's authenticator can make one


class _EmailFormMixin:
    def clean_email(self):
        # Stored lower-cased, as sign-in looks it up; a case-variant duplicate is refused here.
        User = get_user_model()
        email = User.objects.normalize_email(self.cleaned_data["email"])
        if User.objects.filter(email=email).exclude(pk=self.instance.pk).exists():
            raise forms.ValidationError("A user with this email already exists.")
        return email


class UserCreationForm(_EmailFormMixin, AdminUserCreationForm):
    class Meta:
        model = _FORM_MODEL
        fields = ("email", "name")


class UserChangeFormForEmail(_EmailFormMixin, UserChangeForm):
    class Meta:
        model = _FORM_MODEL
        fields = "__all__"


def _reset_two_factor(model_admin, request, users_):
    from django.contrib import messages

    from authservice.two_factor import reset

    # Resetting strips a superuser's second factor, leaving the password alone between an attacker and
    # everything: only a superuser may do that to a superuser.
    allowed = [user for user in users_ if request.user.is_superuser or not getattr(user, "is_superuser", False)]
    for user in allowed:
        reset.reset(user, by=f"admin {request.user.pk}")
        model_admin.log_change(request, user, "Reset two-factor authentication")
    model_admin.message_user(request, f"Two-factor authentication reset for {len(allowed)} user(s).")
    if len(allowed) < len(users_):
        model_admin.message_user(request, f"{len(users_) - len(allowed)} superuser(s) left as they were: only a "
                                          "superuser may reset a superuser's factors.", messages.WARNING)


class UserAdmin(DjangoUserAdmin):
    """Also usable for a project's own subclass: ``admin.site.register(MyUser, UserAdmin)``."""

    form = UserChangeFormForEmail
    add_form = UserCreationForm
    ordering = ("-created_at",)
    list_display = ("email", "name", "email_verified", "two_factor_enabled", "is_staff", "created_at")
    list_filter = ("email_verified", "two_factor_enabled", "is_staff", "is_superuser", "is_active")
    search_fields = ("email", "name", "id")
    readonly_fields = ("id", "created_at", "updated_at", "last_login", "two_factor_enabled")
    actions = ["reset_two_factor"]
    fieldsets = (
        (None, {"fields": ("id", "email", "password")}),
        ("Profile", {"fields": ("name", "image", "email_verified")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Two-factor authentication", {"fields": ("two_factor_enabled",)}),
        ("Dates", {"fields": ("last_login", "created_at", "updated_at")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "name", "password1", "password2")}),)
    inlines = [AccountInline, SessionInline, PasskeyInline]

    # A reset turns factors off: the change permission, not the view permission the changelist needs.
    @admin.action(description="Reset two-factor authentication (TOTP, backup codes, trusted devices, passkeys)",
                  permissions=["change"])
    def reset_two_factor(self, request, queryset):
        _reset_two_factor(self, request, queryset)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and "email" in form.changed_data:
            from authservice.flows import passwords

            # Reset links mailed to the old address must not reset the account any more.
            passwords.revoke_reset_tokens(obj)
        # A user given a password here signs in with it: that needs the credential account.
        if not change and obj.has_usable_password():
            Account.objects.get_or_create(provider_id=Account.CREDENTIAL, account_id=obj.pk,
                                          defaults={"user": obj})


if not User._meta.swapped:
    admin.site.register(User, UserAdmin)


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ("user", "created_at", "expires_at", "ip_address", "user_agent")
    list_select_related = ("user",)
    search_fields = (f"user__{users.email_field()}", "ip_address")
    list_filter = ("created_at",)
    # The token is a bearer credential: admins may revoke (delete) a session, never read its token.
    exclude = ("token",)
    readonly_fields = ("user", "expires_at", "ip_address", "user_agent", "created_at", "updated_at")


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ("user", "provider_id", "account_id", "created_at")
    list_filter = ("provider_id",)
    list_select_related = ("user",)
    search_fields = (f"user__{users.email_field()}", "account_id")
    exclude = ("access_token", "refresh_token", "id_token")
    readonly_fields = ("user", "provider_id", "account_id", "access_token_expires_at",
                       "refresh_token_expires_at", "scope", "created_at", "updated_at")


@admin.register(Passkey)
class PasskeyAdmin(admin.ModelAdmin):
    """Every user model's passkeys (a project's own user admin has no inline): list, search, delete."""

    list_display = ("user", "name", "device_type", "backed_up", "created_at")
    list_filter = ("device_type", "backed_up")
    list_select_related = ("user",)
    search_fields = (f"user__{users.email_field()}", "name")
    readonly_fields = ("user", "name", "credential_id", "public_key", "counter", "device_type", "backed_up",
                       "transports", "aaguid", "created_at")

    def has_add_permission(self, request):
        return False

    def delete_model(self, request, obj):
        pk = obj.pk
        super().delete_model(request, obj)
        _passkey_removed(obj, pk)

    def delete_queryset(self, request, queryset):
        removed = list(queryset.select_related("user"))
        super().delete_queryset(request, queryset)
        for passkey in removed:
            _passkey_removed(passkey, passkey.pk)


@admin.register(Verification)
class VerificationAdmin(admin.ModelAdmin):
    list_display = ("kind", "expires_at", "created_at")
    exclude = ("identifier", "value")
    readonly_fields = ("expires_at", "created_at", "updated_at")

    @admin.display(description="kind")
    def kind(self, obj):
        return str(obj)


if not users.layout().own:
    @admin.register(AuthProfile)
    class AuthProfileAdmin(admin.ModelAdmin):
        list_display = ("user", "email_verified", "two_factor_enabled", "created_at", "updated_at")
        list_filter = ("email_verified", "two_factor_enabled")
        list_select_related = ("user",)
        search_fields = (f"user__{users.email_field()}",)
        readonly_fields = ("user", "created_at", "updated_at", "two_factor_enabled")
        actions = ["reset_two_factor"]

        @admin.action(description="Reset two-factor authentication of these users", permissions=["change"])
        def reset_two_factor(self, request, queryset):
            _reset_two_factor(self, request, [profile.user for profile in queryset.select_related("user")])
