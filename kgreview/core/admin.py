"""Admin building blocks: nothing in kgreview's admin can delete a row."""

from __future__ import annotations

from django.contrib import admin

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
