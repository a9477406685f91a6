"""Reads for the explorer pages: the page shell's facts and the diff between two instants.

The neighbourhood itself is not read here: the page fetches it from the read API.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Count, Exists, OuterRef

from kgreview.graph.history import GraphDiff, graph_diff
from kgreview.graph.models import Concept, ConceptType, Edge, RelationType
from kgreview.graph.selectors import edges_active

# The seeded vocabulary keeps the same colour everywhere; types a curator adds later take
# the next free colour in key order. All are dark enough for 2px lines on white.
RELATION_COLOURS = {
    "prerequisite": "#2f5bd3",
    "builds_on": "#7c3aed",
    "part_of": "#15803d",
    "contrasts_with": "#c2410c",
    "applies_to": "#0e7490",
    "related": "#64748b",
}
EXTRA_COLOURS = (
    "#be185d",
    "#a16207",
    "#b91c1c",
    "#4d7c0f",
    "#1e3a8a",
    "#86198f",
    "#0f766e",
    "#78350f",
)


def relation_palette() -> list[dict]:
    """Every relation type, each with its colour, in key order: the active ones, and the
    retired ones that hold an edge (they still draw as of the past). A retired relation
    that never held one (a team graph's curriculum relations) is left out; the colours
    are given over all of them, so leaving one out recolours no other."""
    rows = list(
        RelationType.objects.order_by("key").annotate(
            held=Exists(Edge.objects.filter(relation=OuterRef("pk")))
        )
    )
    extra = iter(EXTRA_COLOURS * (1 + len(rows) // len(EXTRA_COLOURS)))
    palette = [(r, RELATION_COLOURS.get(r.key) or next(extra)) for r in rows]
    return [
        {
            "key": r.key,
            "label": r.label,
            "verb": r.verb,
            "directed": r.directed,
            "active": r.active,
            "colour": colour,
        }
        for r, colour in palette
        if r.active or r.held
    ]


#: Concept types' node colours: each keeps the colour of its place in the order types were
#: made (never deleted, so a new type never recolours an old one). Every one is at least
#: 3:1 against white and against the white of a node's border, as a graphic must be.
TYPE_COLOURS = (
    "#1d4ed8",
    "#b45309",
    "#047857",
    "#be123c",
    "#6d28d9",
    "#0e7490",
    "#a21caf",
    "#4d7c0f",
    "#c2410c",
    "#1e3a8a",
)
#: An untyped concept's colour: slate grey (4.8:1 against white); the legend says so.
UNTYPED_COLOUR = "#64748b"


def type_palette() -> list[dict]:
    """Every concept type (retired ones too: a concept had them as of the past) with its
    parent's key and its colour, in key order. One query."""
    rows = list(ConceptType.objects.order_by("pk"))
    keys = {t.pk: t.key for t in rows}
    out = [
        {
            "key": t.key,
            "label": t.label,
            "parent": keys.get(t.parent_id) if t.parent_id else None,
            "active": t.active,
            "colour": TYPE_COLOURS[i % len(TYPE_COLOURS)],
        }
        for i, t in enumerate(rows)
    ]
    return sorted(out, key=lambda t: t["key"])


def first_edge_instant() -> datetime | None:
    """The earliest instant at which the graph held any edge (recorded and valid), or
    ``None`` when no edge was ever recorded.

    Walks edges in ``recorded_at`` order (an index) and stops as soon as no later row can
    be earlier: an edge holds from max(recorded_at, valid_at), never before recorded_at.
    Usually one row is read, however large the graph.
    """
    best = None
    rows = Edge.objects.order_by("recorded_at", "pk").values_list("recorded_at", "valid_at")
    for recorded, valid in rows.iterator(chunk_size=100):
        if best is not None and recorded >= best:
            break
        held = max(recorded, valid)
        best = held if best is None else min(best, held)
    return best


def starting_points(*, limit: int = 8) -> list[dict]:
    """The most connected concepts now, to start exploring from."""
    rows = (
        edges_active()
        .values("source_id")
        .annotate(n=Count("id"))
        .order_by("-n", "source_id")[:limit]
    )
    counts = {r["source_id"]: r["n"] for r in rows}
    names = dict(Concept.objects.filter(pk__in=counts).values_list("pk", "name"))
    return [{"id": pk, "name": names[pk], "edges": n} for pk, n in counts.items() if pk in names]


# --- Changes between two instants ----------------------------------------------------------

DIFF_LIMIT = 100


@dataclass(frozen=True)
class Superseded:
    old: Edge
    new: Edge | None
    changes: list[str]


def _num(value: float) -> str:
    return f"{value:.2f}"


# What an edge's newer row can change, in the order it is told: its name in words, what
# tells the two rows apart, and how a value is shown (None: the change is only named).
_CHANGES = (
    ("source", lambda e: e.source_id, lambda e: e.source.name),
    ("relation", lambda e: e.relation_id, lambda e: e.relation.label),
    ("target", lambda e: e.target_id, lambda e: e.target.name),
    ("confidence", lambda e: e.confidence, lambda e: _num(e.confidence)),
    ("weight", lambda e: e.weight, lambda e: _num(e.weight)),
    ("reason", lambda e: e.reason, lambda e: f"“{e.reason}”"),
    ("evidence", lambda e: (e.evidence_revision_id, e.evidence_start, e.evidence_end), None),
    ("holds from", lambda e: e.valid_at, None),
)


def edge_changes(old: Edge, new: Edge | None) -> list[str]:
    """What the newer row changed, in words: endpoints, relation, confidence, weight,
    reason, evidence, and when the fact holds from."""
    if new is None:
        return ["The replacing row is not recorded."]
    words = [
        name if shown is None else f"{name} {shown(old)} → {shown(new)}"
        for name, key, shown in _CHANGES
        if key(old) != key(new)
    ]
    return words or ["nothing visible (same claim, re-recorded)"]


def iso_ms(value: datetime, *, up: bool = False) -> str:
    """UTC, to the millisecond, ending in Z: what browsers' ``Date`` reads exactly.
    ``up`` rounds up, so the instant is not before ``value``."""
    utc = value.astimezone(UTC)
    if up and utc.microsecond % 1000:
        utc += timedelta(microseconds=1000 - utc.microsecond % 1000)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def just_before_retired(edge: Edge) -> datetime:
    """An instant at which a retired edge was still in the graph, to draw it there."""
    held_from = max(edge.recorded_at, edge.valid_at)
    return max(held_from, edge.invalid_at - timedelta(milliseconds=1))


@dataclass(frozen=True)
class Changes:
    diff: GraphDiff
    superseded: list[Superseded]
    limit: int


def changes_between(*, since: datetime, until: datetime, limit: int = DIFF_LIMIT) -> Changes:
    """The diff between two instants, with each supersession's changes in words."""
    diff = graph_diff(since=since, until=until, limit=limit)
    return Changes(
        diff=diff,
        superseded=[Superseded(old, new, edge_changes(old, new)) for old, new in diff.superseded],
        limit=limit,
    )
