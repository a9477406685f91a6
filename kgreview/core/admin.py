"""Admin building blocks: nothing in kgreview's admin can delete a row."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import PermissionDenied

from .models import AuditEntry


class NoDeleteAdmin(admin.ModelAdmin):
    """Hides delete buttons and the bulk-delete action; the model raises anyway."""

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


class ReadOnlyAdmin(NoDeleteAdmin):
    """Provenance and audit rows: visible to staff, changed only by services."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "user", "action", "summary")
    list_filter = ("action", "subject_type")
    search_fields = ("summary", "subject_id")


User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class AccountAdmin(UserAdmin):
    """Accounts are deactivated, never deleted: history names the people who made it."""

    REFUSAL = (
        "Accounts are never deleted: decisions, edges, runs and tokens name the people who "
        "made them. Untick Active to close one."
    )

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def delete_view(self, request, object_id, extra_context=None):
        raise PermissionDenied(self.REFUSAL)

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None:
            return fieldsets
        # Say where delete went, beside the box that replaces it.
        return [
            (
                name,
                {
                    **options,
                    "description": self.REFUSAL,
                },
            )
            if name == "Permissions"
            else (name, options)
            for name, options in fieldsets
        ]
