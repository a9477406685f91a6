"""Time travel: the graph at an instant, what changed between two instants, and the
evidence of one edge in context. Reads only.

Why an edge exists (the proposal and decisions behind it) is read by
``kgreview.review.history``, which sits above the graph."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from construction.quotes import evidence_present

from .models import (
    AttributeValue,
    Concept,
    ConceptType,
    ConceptTypeChange,
    Edge,
    RelationType,
)
from .selectors import edges_as_of

EDGE_RELATED = (
    "source",
    "target",
    "relation",
    "evidence_revision__source",
    "decided_by",
    "invalidated_by",
)
DEFER = ("evidence_revision__text",)


def concepts_as_of(*, at: datetime | None) -> QuerySet[Concept]:
    """Concepts that were nodes of the graph at ``at`` (now when ``None``).

    A concept counts from its creation until it was merged away or retired.
    """
    if at is None:
        return Concept.objects.filter(status=Concept.Status.ACTIVE)
    return (
        Concept.objects.filter(created_at__lte=at)
        .filter(Q(merged_at__isnull=True) | Q(merged_at__gt=at))
        .filter(Q(retired_at__isnull=True) | Q(retired_at__gt=at))
    )


def concept_existed_at(concept: Concept, at: datetime | None) -> bool:
    """Whether ``concept`` was a node of the graph at ``at`` (now when ``None``): the
    same rule as ``concepts_as_of``, for a concept already in hand."""
    if at is None:
        return concept.status == Concept.Status.ACTIVE
    return (
        concept.created_at <= at
        and (concept.merged_at is None or concept.merged_at > at)
        and (concept.retired_at is None or concept.retired_at > at)
    )


def concept_types_at(
    concept_ids: list[int], *, at: datetime | None
) -> dict[int, ConceptType | None]:
    """Each concept's type at ``at`` (now when ``None``): the last change of its type
    history (``ConceptTypeChange``) made by then, or none (untyped then). One query."""
    if at is None:
        rows = Concept.objects.filter(pk__in=concept_ids).select_related("type")
        return {c.pk: c.type for c in rows}
    found: dict[int, ConceptType | None] = dict.fromkeys(concept_ids)
    changes = (
        ConceptTypeChange.objects.filter(concept_id__in=concept_ids, changed_at__lte=at)
        .select_related("type")
        .order_by("concept_id", "changed_at", "id")
    )
    for change in changes:  # the last one of each concept wins
        found[change.concept_id] = change.type
    return found


def concept_type_at(concept: Concept, at: datetime | None) -> ConceptType | None:
    """The type ``concept`` had at ``at`` (now when ``None``)."""
    if at is None:
        return concept.type if concept.type_id is not None else None
    return concept_types_at([concept.pk], at=at)[concept.pk]


def attribute_values_at(
    concept_ids: list[int], *, at: datetime | None
) -> dict[int, list[AttributeValue]]:
    """Each concept's attribute values at ``at`` (now when ``None``): the rows recorded
    by then and not yet ended (``recorded_at`` <= at < ``invalid_at``), with their
    attribute, its type and the evidence's source, by the attribute's key. One query; a
    concept with none is absent."""
    rows = AttributeValue.objects.filter(concept_id__in=concept_ids)
    if at is None:
        rows = rows.filter(status=AttributeValue.Status.ACTIVE)
    else:
        rows = rows.filter(recorded_at__lte=at).filter(
            Q(invalid_at__isnull=True) | Q(invalid_at__gt=at)
        )
    found: dict[int, list[AttributeValue]] = {}
    for row in (
        rows.select_related("attribute__concept_type", "evidence_revision__source")
        .defer(*DEFER)
        .order_by("concept_id", "attribute__key", "attribute_id")
    ):
        found.setdefault(row.concept_id, []).append(row)
    return found


def relations_as_of(*, at: datetime | None) -> QuerySet[RelationType]:
    if at is None:
        return RelationType.objects.filter(active=True)
    return RelationType.objects.filter(created_at__lte=at).filter(
        Q(retired_at__isnull=True) | Q(retired_at__gt=at)
    )


def edge_state_at(edge: Edge, at: datetime | None) -> str:
    """What the edge was at ``at``: ``active``, ``not_yet`` or its retired status."""
    if at is None:
        return edge.status
    if edge.recorded_at > at or edge.valid_at > at:
        return "not_yet"
    if edge.invalid_at is None or edge.invalid_at > at:
        return "active"
    return edge.status


# --- Diff -------------------------------------------------------------------------------


@dataclass
class GraphDiff:
    """What changed between two instants: edges added, invalidated and superseded
    (each superseded row with the row that replaced it), concepts added and merged."""

    since: datetime
    until: datetime
    added: list[Edge]
    invalidated: list[Edge]
    superseded: list[tuple[Edge, Edge | None]]
    concepts_added: list[Concept]
    concepts_merged: list[Concept]
    counts: dict[str, int]
    limit: int

    @property
    def truncated(self) -> bool:
        return any(self.counts[k] > self.limit for k in ("added", "invalidated", "superseded"))


def graph_diff(*, since: datetime, until: datetime, limit: int = 500) -> GraphDiff:
    """The edges in the graph at ``until`` but not at ``since`` (added) and those in it
    at ``since`` but not at ``until`` (removed: invalidated, or superseded by a newer row).

    An edge both added and removed inside the window was never in either snapshot and is
    not part of the diff. ``since`` after ``until`` is answered as the reverse window.
    """
    if since > until:
        since, until = until, since
    at_until = edges_as_of(at=until)
    added = at_until.filter(Q(recorded_at__gt=since) | Q(valid_at__gt=since))
    removed = edges_as_of(at=since).filter(invalid_at__isnull=False, invalid_at__lte=until)
    invalidated = removed.exclude(status=Edge.Status.SUPERSEDED)
    superseded = removed.filter(status=Edge.Status.SUPERSEDED)
    counts = {
        "added": added.count(),
        "invalidated": invalidated.count(),
        "superseded": superseded.count(),
    }
    old_rows = list(
        superseded.select_related(*EDGE_RELATED).defer(*DEFER).order_by("invalid_at", "id")[:limit]
    )
    newer = {
        e.supersedes_id: e
        for e in Edge.objects.select_related(*EDGE_RELATED)
        .defer(*DEFER)
        .filter(supersedes_id__in=[e.pk for e in old_rows])
    }
    concepts_added = Concept.objects.filter(created_at__gt=since, created_at__lte=until)
    concepts_merged = Concept.objects.filter(merged_at__gt=since, merged_at__lte=until)
    counts["concepts_added"] = concepts_added.count()
    counts["concepts_merged"] = concepts_merged.count()
    return GraphDiff(
        since=since,
        until=until,
        added=list(
            added.select_related(*EDGE_RELATED).defer(*DEFER).order_by("recorded_at", "id")[:limit]
        ),
        invalidated=list(
            invalidated.select_related(*EDGE_RELATED)
            .defer(*DEFER)
            .order_by("invalid_at", "id")[:limit]
        ),
        superseded=[(e, newer.get(e.pk)) for e in old_rows],
        concepts_added=list(concepts_added.order_by("created_at", "id")[:limit]),
        concepts_merged=list(
            concepts_merged.select_related("merged_into").order_by("merged_at", "id")[:limit]
        ),
        counts=counts,
        limit=limit,
    )


# --- Evidence ---------------------------------------------------------------------------

CONTEXT_CHARS = 160


def evidence_context(edge: Edge) -> dict | None:
    """The quote with the text around it in the revision it was taken from, and whether
    the source's current revision still contains it (``construction.quotes.evidence_present``,
    the rule the agents retire edges by)."""
    rev = edge.evidence_revision
    if rev is None:
        return None
    text = rev.text
    start, end = edge.evidence_start, edge.evidence_end
    if start is None or end is None:  # the edge_evidence_consistent constraint forbids it
        raise ValueError(f"Edge #{edge.pk} cites revision #{rev.pk} but no span in it.")
    source = rev.source
    current = source.current_revision if source.current_revision_id else None
    if current is None or current.pk == rev.pk:
        still_there = True
    else:
        still_there = evidence_present(edge.evidence_quote, current.text)
    return {
        "source": source.slug,
        "source_title": source.title,
        "revision": rev.number,
        "revision_id": rev.pk,
        "current_revision": current.number if current else None,
        "start": start,
        "end": end,
        "quote": edge.evidence_quote,
        "before": text[max(0, start - CONTEXT_CHARS) : start],
        "after": text[end : end + CONTEXT_CHARS],
        "in_current_revision": still_there,
    }
