"""Admin for the queue: read-only; proposals are decided in the reviewer workspace."""

from django.contrib import admin

from kgreview.core.admin import ReadOnlyAdmin
from kgreview.review.models import Decision, Proposal


@admin.register(Proposal)
class ProposalAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "status", "confidence", "priority", "origin", "created_at")
    list_filter = ("status", "kind")
    search_fields = ("reason", "evidence_quote", "dedup_key")


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = ("id", "proposal", "action", "user", "reason_code", "created_at")
    list_filter = ("action", "reason_code")
    search_fields = ("note",)
