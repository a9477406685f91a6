"""What the open proposals say on the graph's own pages: how many wait, which touch a
concept, how many would add an edge of each relation type. Reads only.

The graph's selectors know nothing of proposals (review sits above the graph); the pages
that show both (``kgreview.web``) put these next to the graph's figures.
"""

from __future__ import annotations

from django.db.models import Count, Q

from kgreview.graph.models import Concept, RelationType
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.models import OPEN_STATUSES, Proposal


def proposal_totals() -> dict[str, int]:
    """How many proposals wait for a decision (``pending``) and how many are held."""
    by_status = dict(
        Proposal.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    return {"pending": by_status.get("pending", 0), "held": by_status.get("held", 0)}


def open_proposals_touching(concept: Concept, limit: int = 100) -> list[Proposal]:
    """Open proposals with the concept at either end, highest priority first."""
    return list(
        Proposal.objects.filter(status__in=OPEN_STATUSES)
        .filter(Q(source_concept=concept) | Q(target_concept=concept))
        .select_related("source_concept", "target_concept", "relation")
        .order_by("-priority", "-id")[:limit]
    )


def with_open_counts(relations: list[RelationType]) -> list[RelationType]:
    """Each relation type with ``open_proposals``: the open proposals that would add an
    edge of it."""
    counts = dict(
        Proposal.objects.filter(kind=AddEdgeKind.key, status__in=OPEN_STATUSES)
        .values_list("relation_key")
        .annotate(n=Count("id"))
        .values_list("relation_key", "n")
    )
    for r in relations:
        r.open_proposals = counts.get(r.key, 0)
    return relations
