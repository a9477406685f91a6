"""What an export holds: the graph as of an instant, read in chunks, never all at once.

The graph as of ``at``:

- edges: ``kgreview.graph.selectors.edges_as_of(at=at)``: recorded and valid by ``at``
  and not retired by then, so an edge invalidated later is still in a past export;
- concepts: ``kgreview.graph.history.concepts_as_of(at=at)``, those that existed at
  ``at`` (created by then, and not merged or retired at or before it), plus every
  endpoint of those edges;
- relation types: those created by ``at``, plus every type those edges use.

Because all three are defined by timestamps at or before ``at``, writes that happen
while an export streams (they are recorded after ``at``) do not change what it holds.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from django.db.models import F, Prefetch, Q, QuerySet
from django.utils import timezone

from kgreview.core.errors import ValidationFailed
from kgreview.graph.history import concepts_as_of
from kgreview.graph.models import (
    Attribute,
    AttributeValue,
    Concept,
    ConceptAlias,
    ConceptType,
    Edge,
    RelationPattern,
    RelationType,
)
from kgreview.graph.selectors import edges_as_of

CHUNK = 2000

AS_OF_HELP = (
    "an ISO 8601 date or date-time, e.g. 2024-05-01, 2024-05-01T14:30 or "
    "2024-05-01T14:30:00+02:00 (a date means 00:00 that day; no offset means the "
    "project's time zone)"
)


def parse_as_of(value: str) -> datetime:
    """An aware datetime from ISO 8601 text; naive values are in the project's time zone.

    Raises ``ValidationFailed`` with a sentence a person can act on.
    """
    text = (value or "").strip()
    if not text:
        raise ValidationFailed(f"Give the instant as {AS_OF_HELP}.")
    try:
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            # datetime.fromisoformat reads dates too; this also accepts the week and
            # ordinal forms date.fromisoformat knows (2024-W18-3, 2024-122).
            parsed = datetime.combine(date.fromisoformat(text), time())
        if timezone.is_naive(parsed):
            parsed = timezone.make_aware(parsed, timezone.get_default_timezone())
        # Normalising to UTC finds instants that only exist past the calendar's ends.
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise ValidationFailed(f'"{shown}" is not a date or time: use {AS_OF_HELP}.') from None


def export_edges(*, at: datetime) -> QuerySet[Edge]:
    """Edges of the graph as of ``at`` with what their provenance needs, in id order.

    Only the columns written out are loaded: the revision's text (a whole lesson) and
    the concepts' descriptions stay in the database.
    """
    return (
        edges_as_of(at=at)
        .select_related("relation", "evidence_revision__source", "decided_by")
        .only(
            "id",
            "source",
            "target",
            "relation__key",
            "relation__label",
            "relation__symmetric",
            "relation__acyclic",
            "weight",
            "confidence",
            "reason",
            "status",
            "valid_at",
            "recorded_at",
            "invalid_at",
            "evidence_revision__number",
            "evidence_revision__source__slug",
            "evidence_start",
            "evidence_end",
            "evidence_quote",
            "decided_by__username",
        )
        # Review's record of the proposal and decision behind each edge (none for an edge
        # seeded or imported), joined in the same query.
        .annotate(proposal_ref=F("provenance__proposal"), decision_ref=F("provenance__decision"))
        .order_by("pk")
    )


def export_concepts(*, at: datetime) -> QuerySet[Concept]:
    """Concepts of the graph as of ``at``, in id order, each with ``export_aliases``.

    Aliases are the names the concept holds now, less those it gained after ``at``
    (aliases added later, names that came with a later merge). A name that came through
    a chain of merges (A into B, then B into C) carries ``hop``, the concept its owner
    went into first; when that is not the holder, ``records`` checks when the chain
    reached the holder (``graph.selectors.arrived_at``).
    """
    edges = edges_as_of(at=at)
    aliases = (
        ConceptAlias.objects.filter(
            Q(kind=ConceptAlias.Role.ALIAS, created_at__lte=at)
            | Q(kind=ConceptAlias.Role.MERGED, merged_from__merged_at__lte=at)
        )
        .annotate(hop=F("merged_from__merged_into"))
        .only("concept_id", "name", "kind", "merged_from_id")
        .order_by("name", "pk")
    )
    ends = Concept.objects.filter(
        Q(pk__in=edges.values("source_id")) | Q(pk__in=edges.values("target_id"))
    )
    return (
        (concepts_as_of(at=at) | ends)
        .only("id", "name", "description", "status", "merged_into", "created_at")
        .prefetch_related(Prefetch("aliases", queryset=aliases, to_attr="export_aliases"))
        .order_by("pk")
    )


def export_relation_types(*, at: datetime) -> QuerySet[RelationType]:
    """The vocabulary as of ``at``: types created by then and every type its edges use."""
    used = edges_as_of(at=at).values("relation_id")
    return (
        RelationType.objects.filter(Q(created_at__lte=at) | Q(pk__in=used))
        .select_related("inverse")
        .order_by("key")
    )


def export_counts(*, at: datetime) -> dict[str, int]:
    """How many concepts and edges an export as of ``at`` holds (two COUNT queries)."""
    return {
        "concepts": export_concepts(at=at).count(),
        "edges": edges_as_of(at=at).count(),
    }


# --- The ontology beyond relation types (the RDF exports and the SHACL shapes) -------------


def _live_at(at: datetime) -> Q:
    """Made by ``at`` and not retired at it."""
    return Q(created_at__lte=at) & (Q(retired_at__isnull=True) | Q(retired_at__gt=at))


def export_concept_types(*, at: datetime) -> list[ConceptType]:
    """Concept types made by ``at`` (retired ones too: concepts keep them), by key, each
    with its parent as it is now (a type's parent keeps no history)."""
    return list(
        ConceptType.objects.filter(created_at__lte=at).select_related("parent").order_by("key")
    )


def export_patterns(*, at: datetime) -> list[RelationPattern]:
    """The relation patterns in force at ``at``."""
    return list(
        RelationPattern.objects.filter(_live_at(at))
        .select_related("relation", "domain", "range")
        .order_by("relation__key", "domain__key", "range__key", "pk")
    )


def export_attributes(*, at: datetime) -> list[Attribute]:
    """The attributes declared by ``at`` (retired ones too: values may still cite them)."""
    return list(
        Attribute.objects.filter(created_at__lte=at)
        .select_related("concept_type")
        .order_by("concept_type__key", "key")
    )


def export_attribute_values(*, at: datetime) -> QuerySet[AttributeValue]:
    """The values current at ``at``, of concepts the export holds, in id order."""
    concepts = export_concepts(at=at).values("pk")
    return (
        AttributeValue.objects.filter(recorded_at__lte=at, concept_id__in=concepts)
        .filter(Q(invalid_at__isnull=True) | Q(invalid_at__gt=at))
        .select_related("attribute__concept_type", "evidence_revision__source")
        .defer("evidence_revision__text", "evidence_revision__structure")
        .order_by("pk")
    )
