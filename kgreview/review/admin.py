"""Admin for the queue: read-only; proposals are decided in the reviewer workspace."""

from django.contrib import admin

from kgreview.core.admin import ReadOnlyAdmin
from kgreview.review.models import Decision, EdgeProvenance, Proposal


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


@admin.register(EdgeProvenance)
class EdgeProvenanceAdmin(ReadOnlyAdmin):
    """Which proposal and decisions made and retired an edge row (the edge's own admin
    page is graph's, which never names review)."""

    list_display = ("edge", "proposal", "decision", "invalidation_decision")
    list_select_related = ("edge__source", "edge__target", "edge__relation")
    raw_id_fields = ("edge", "proposal", "decision", "invalidation_decision")
