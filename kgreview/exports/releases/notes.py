"""A release's notes: what changed in the graph between two instants, as data.

The notes compare two snapshots of the graph, as the exports read them: the previous
release's instant (``since``; none for a first release, which is compared with an empty
graph) and this release's (``until``).

- **Concepts.** Those in the graph at ``until`` and not at ``since`` are *added*; those in
  it at ``since`` and not at ``until`` were *merged* (into the concept named, as it is
  now) or *retired*. A concept made and merged inside the window was in neither
  snapshot and is not listed.
- **Edges.** Rows asserted at ``until`` and not at ``since`` against rows asserted at
  ``since`` and not at ``until``. A removed row whose chain of replacements
  (``Edge.supersedes``) ends in an added row was *changed* (an edit, or a merge
  re-pointing it); the other removed rows were *retired*; the other added rows *added*.
- **Vocabulary.** Relation types and concept types in the vocabulary at ``until`` and
  not at ``since`` (*added*), or the other way round (*retired*).
- **Counts per relation**: edges at each end of the window, added, changed and retired.
- **Who decided how much**: the decisions people took in the window, per person and
  action (accepted, edited and accepted, rejected, undone).

Lists hold at most ``LIMIT`` rows each, in a stable order; the counts are always whole.
Everything is read with timestamps at or before ``until``, so notes built while
reviewers keep deciding say the same.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from django.db.models import Count, Q, QuerySet

from kgreview.graph.history import concepts_as_of
from kgreview.graph.models import Concept, ConceptType, Edge, RelationType
from kgreview.graph.selectors import edges_as_of
from kgreview.review.models import Decision

from ..writers.records import iso

#: The most rows any one list of the notes holds (the counts are always whole).
LIMIT = 1000
#: How far back a chain of replacements is followed inside one window.
CHAIN = 50
#: The decisions "who decided how much" counts: a person's, on the graph.
COUNTED = {
    Decision.Action.ACCEPT: "accepted",
    Decision.Action.EDIT_ACCEPT: "edited",
    Decision.Action.REJECT: "rejected",
    Decision.Action.UNDO: "undone",
}


def _window(field: str, since: datetime | None, until: datetime) -> Q:
    q = Q(**{f"{field}__lte": until})
    if since is not None:
        q &= Q(**{f"{field}__gt": since})
    return q


def _concept_row(c: Concept) -> dict:
    return {"id": c.pk, "name": c.name}


def _concepts(since: datetime | None, until: datetime) -> dict:
    now = concepts_as_of(at=until)
    before = Concept.objects.none() if since is None else concepts_as_of(at=since)
    added = now.exclude(pk__in=before.values("pk"))
    gone = before.exclude(pk__in=now.values("pk"))
    merged = gone.filter(merged_at__isnull=False, merged_at__lte=until)
    retired = gone.exclude(pk__in=merged.values("pk"))
    return {
        "counts": {
            "before": before.count(),
            "after": now.count(),
            "added": added.count(),
            "merged": merged.count(),
            "retired": retired.count(),
        },
        "added": [_concept_row(c) for c in added.only("id", "name").order_by("name", "id")[:LIMIT]],
        "merged": [
            {**_concept_row(c), "into": _concept_row(c.merged_into) if c.merged_into else None}
            for c in merged.select_related("merged_into")
            .only("id", "name", "merged_into__id", "merged_into__name")
            .order_by("name", "id")[:LIMIT]
        ],
        "retired": [
            _concept_row(c) for c in retired.only("id", "name").order_by("name", "id")[:LIMIT]
        ],
    }


def _edge_row(e: Edge) -> dict:
    return {
        "id": e.pk,
        "source": e.source.name,
        "relation": e.relation.key,
        "target": e.target.name,
    }


def _edge_rows(rows: QuerySet[Edge]) -> list[dict]:
    listed = (
        rows.select_related("source", "target", "relation")
        .only("id", "source__name", "target__name", "relation__key")
        .order_by("relation__key", "source__name", "target__name", "id")
    )
    return [_edge_row(e) for e in listed[:LIMIT]]


def _changed_pairs(added: QuerySet[Edge], removed_ids: set[int]) -> list[tuple[int, int]]:
    """(removed row, the added row that replaced it) for each added row whose chain of
    ``supersedes`` reaches a removed one, following rows made and replaced inside the
    window: one query per step back, for every chain at once, at most ``CHAIN`` steps."""
    if not removed_ids:
        return []
    pairs: list[tuple[int, int]] = []
    # Each added row that replaced another, and the row its chain has reached so far.
    reached = dict(added.filter(supersedes__isnull=False).values_list("pk", "supersedes"))
    for _ in range(CHAIN):
        pairs += [(old, new) for new, old in reached.items() if old in removed_ids]
        rest = {new: old for new, old in reached.items() if old not in removed_ids}
        if not rest:
            break
        parents = dict(
            Edge.objects.filter(pk__in=set(rest.values()), supersedes__isnull=False).values_list(
                "pk", "supersedes"
            )
        )
        reached = {new: parents[old] for new, old in rest.items() if old in parents}
    return sorted(pairs)


def _per_relation(before: QuerySet[Edge], now: QuerySet[Edge], moved: dict) -> dict[str, dict]:
    counts: dict[str, dict] = {}

    def tally(rows: QuerySet[Edge], field: str) -> None:
        for key, n in rows.values_list("relation__key").annotate(n=Count("pk")).order_by():
            counts.setdefault(
                key, {"before": 0, "after": 0, "added": 0, "changed": 0, "retired": 0}
            )[field] = n

    tally(before, "before")
    tally(now, "after")
    for field, rows in moved.items():
        tally(rows, field)
    return dict(sorted(counts.items()))


def _edges(since: datetime | None, until: datetime) -> tuple[dict, dict]:
    now = edges_as_of(at=until)
    before = edges_as_of(at=since) if since is not None else Edge.objects.none()
    added = now.exclude(pk__in=before.values("pk"))
    removed = before.exclude(pk__in=now.values("pk"))
    pairs = _changed_pairs(added, set(removed.values_list("pk", flat=True)))
    old_ids = [old for old, _ in pairs]
    new_ids = [new for _, new in pairs]
    plain_added = added.exclude(pk__in=new_ids)
    retired = removed.exclude(pk__in=old_ids)
    changed_rows = Edge.objects.filter(pk__in=new_ids)
    listed = pairs[:LIMIT]
    shown = {
        e.pk: _edge_row(e)
        for e in Edge.objects.filter(pk__in=[pk for pair in listed for pk in pair])
        .select_related("source", "target", "relation")
        .only("id", "source__name", "target__name", "relation__key")
    }
    edges = {
        "counts": {
            "before": before.count(),
            "after": now.count(),
            "added": plain_added.count(),
            "changed": len(pairs),
            "retired": retired.count(),
        },
        "added": _edge_rows(plain_added),
        "changed": [{"old": shown[old], "new": shown[new]} for old, new in listed],
        "retired": _edge_rows(retired),
    }
    relations = _per_relation(
        before, now, {"added": plain_added, "changed": changed_rows, "retired": retired}
    )
    return edges, relations


def _live_at(at: datetime) -> Q:
    return Q(created_at__lte=at) & (Q(retired_at__isnull=True) | Q(retired_at__gt=at))


def _vocabulary(model, since: datetime | None, until: datetime) -> dict:
    """Types in the vocabulary at ``until`` and not at ``since`` (added), and the other
    way round (retired). A type's retirement keeps one instant (reactivating clears it),
    so a type retired and reactivated inside the window reads as never retired."""
    rows = model.objects.only("key")
    now = rows.filter(_live_at(until))
    before = rows.filter(_live_at(since)) if since is not None else rows.none()
    added = now.exclude(pk__in=before.values("pk")).order_by("key")
    retired = before.exclude(pk__in=now.values("pk")).order_by("key")
    return {
        "added": [r.key for r in added[:LIMIT]],
        "retired": [r.key for r in retired[:LIMIT]],
    }


def _deciders(since: datetime | None, until: datetime) -> list[dict]:
    rows = (
        Decision.objects.filter(_window("created_at", since, until))
        .filter(user__isnull=False, action__in=list(COUNTED))
        .values_list("user__username", "action")
        .annotate(n=Count("pk"))
        .order_by()
    )
    people: dict[str, Counter] = {}
    for username, action, n in rows:
        people.setdefault(username, Counter())[COUNTED[action]] += n
    out = [
        {"username": name, **{word: tally[word] for word in COUNTED.values()}}
        | {"total": sum(tally.values())}
        for name, tally in people.items()
    ]
    return sorted(out, key=lambda row: (-row["total"], row["username"]))


def release_changes(*, since: datetime | None, until: datetime) -> dict:
    """The notes of a release as of ``until`` after one as of ``since`` (None: the first).

    JSON-ready: instants as ISO 8601 text, names as they read when the notes are built.
    """
    edges, relations = _edges(since, until)
    return {
        "since": iso(since) if since is not None else None,
        "until": iso(until),
        "limit": LIMIT,
        "concepts": _concepts(since, until),
        "edges": edges,
        "relations": relations,
        "relation_types": _vocabulary(RelationType, since, until),
        "concept_types": _vocabulary(ConceptType, since, until),
        "deciders": _deciders(since, until),
    }
