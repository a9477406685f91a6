"""Admin for the graph. Curators edit the ontology; provenance is read-only."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count, Q

from kgreview.core.admin import NoDeleteAdmin, ReadOnlyAdmin, ReadOnlyInline
from kgreview.core.errors import DomainError

from . import services
from .models import Concept, ConceptAlias, Edge, RelationType, Source, SourceConcept, SourceRevision

admin.site.site_header = "kgreview administration"
admin.site.site_title = "kgreview"
admin.site.disable_action("delete_selected")


@admin.register(RelationType)
class RelationTypeAdmin(NoDeleteAdmin):
    list_display = (
        "key",
        "label",
        "verb",
        "directed",
        "symmetric",
        "acyclic",
        "active",
        "active_edges",
    )
    list_filter = ("active", "acyclic", "symmetric")
    search_fields = ("key", "label", "description")
    # ``ordered`` is the graph's bookkeeping (``kgreview.graph.order``), never set by hand.
    readonly_fields = ("active", "retired_at", "created_at", "ordered")
    actions = ("retire", "reactivate")

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(n_active=Count("edges", filter=Q(edges__status="active")))
        )

    @admin.display(description="active edges", ordering="n_active")
    def active_edges(self, obj) -> int:
        return obj.n_active

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            # Changing the shape of a relation would change the meaning of its history.
            fields += ["key", "directed", "symmetric", "acyclic"]
        return fields

    def save_model(self, request, obj, form, change):
        if change:
            services.relation_type_describe(
                relation=obj,
                label=obj.label,
                verb=obj.verb,
                description=obj.description,
                acting_user=request.user,
            )
            self._guideline(request, obj, form)
            return
        created = services.relation_type_create(
            key=obj.key,
            label=obj.label,
            verb=obj.verb,
            description=obj.description,
            directed=obj.directed,
            symmetric=obj.symmetric,
            acyclic=obj.acyclic,
            acting_user=request.user,
        )
        obj.pk = created.pk
        obj._state.adding = False
        self._guideline(request, obj, form)
        obj.refresh_from_db()

    def _guideline(self, request, obj, form) -> None:
        """A guideline typed here goes through its service too (audited, judged)."""
        if "guideline" in form.changed_data:
            services.relation_type_guideline(
                relation=obj, text=form.cleaned_data["guideline"], acting_user=request.user
            )

    @admin.action(description="Retire selected relation types (edges and history stay)")
    def retire(self, request, queryset):
        self._apply(request, queryset, services.relation_type_retire, "retired")

    @admin.action(description="Reactivate selected relation types")
    def reactivate(self, request, queryset):
        self._apply(request, queryset, services.relation_type_reactivate, "reactivated")

    def _apply(self, request, queryset, service, verb):
        done = 0
        for relation in queryset:
            try:
                service(relation=relation, acting_user=request.user)
                done += 1
            except DomainError as exc:
                self.message_user(request, str(exc), messages.WARNING)
        if done:
            self.message_user(request, f"{done} relation type(s) {verb}.", messages.SUCCESS)


class AliasInline(ReadOnlyInline):
    model = ConceptAlias
    fk_name = "concept"
    fields = ("name", "kind", "merged_from", "created_at")
    readonly_fields = fields
    show_change_link = False


@admin.register(Concept)
class ConceptAdmin(NoDeleteAdmin):
    list_display = ("name", "status", "merged_into", "created_at")
    list_filter = ("status",)
    search_fields = ("name", "aliases__name")
    readonly_fields = ("status", "merged_into", "merged_at", "created_at", "updated_at")
    inlines = [AliasInline]

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            fields.append("name")
        return fields

    def save_model(self, request, obj, form, change):
        if change:
            services.concept_describe(
                concept=obj, description=obj.description, acting_user=request.user
            )
            return
        created = services.concept_create(
            name=obj.name, description=obj.description, acting_user=request.user
        )
        obj.pk = created.pk
        obj._state.adding = False
        obj.refresh_from_db()


@admin.register(ConceptAlias)
class ConceptAliasAdmin(ReadOnlyAdmin):
    list_display = ("name", "concept", "kind", "merged_from")
    list_filter = ("kind",)
    search_fields = ("name", "concept__name")


class RevisionInline(ReadOnlyInline):
    model = SourceRevision
    fields = ("number", "title", "sha256", "origin", "created_at")
    readonly_fields = fields


@admin.register(Source)
class SourceAdmin(ReadOnlyAdmin):
    list_display = ("slug", "title", "status", "current_revision", "updated_at")
    list_filter = ("status",)
    search_fields = ("slug", "title")
    inlines = [RevisionInline]


@admin.register(SourceRevision)
class SourceRevisionAdmin(ReadOnlyAdmin):
    list_display = ("source", "number", "title", "sha256", "created_at")
    search_fields = ("source__slug", "title", "sha256")


@admin.register(SourceConcept)
class SourceConceptAdmin(ReadOnlyAdmin):
    list_display = ("source", "concept", "revision", "created_at")
    search_fields = ("source__slug", "concept__name")


@admin.register(Edge)
class EdgeAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "source",
        "relation",
        "target",
        "confidence",
        "status",
        "recorded_at",
        "invalid_at",
    )
    list_filter = ("status", "relation")
    search_fields = ("source__name", "target__name", "reason", "evidence_quote")
    list_select_related = ("source", "target", "relation")
    raw_id_fields = ("source", "target", "supersedes")
