"""Reads of the graph. Nothing here writes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Lower

from construction.text import normal_name
from construction.types import RelationSpec
from kgreview.core.tally import tally

from .models import Concept, ConceptAlias, Edge, RelationType, Source


def clean_name(name: str) -> str:
    """The stored form of a name (``construction.text.normal_name``): NFC, no invisible or
    reordering characters, runs of whitespace collapsed, ends trimmed. Every service that
    makes, renames or looks up a concept or alias goes through it."""
    return normal_name(name)


def concept_by_name(*, name: str) -> Concept | None:
    """The concept a name (canonical, alias or merged-away name) resolves to, if any.

    Aliases always point at an active concept: a merge moves them to the survivor.
    """
    owner = name_owner(name=name)
    return owner.concept if owner else None


def name_owner(*, name: str) -> ConceptAlias | None:
    """The alias row (with its concept) holding a name, compared case-insensitively."""
    return (
        ConceptAlias.objects.select_related("concept")
        .annotate(lname=Lower("name"))
        .filter(lname=clean_name(name).lower())
        .first()
    )


def concepts_for_names(names) -> dict[str, Concept]:
    """The concept each name means, by the resolver's rule: the same name or alias (any
    case), else a name with the same key (a plural, a singular). Inactive concepts too;
    names nobody answers to are left out. Two queries for any number of names."""
    from construction.text import name_key

    names = list(dict.fromkeys(names))
    if not names:
        return {}
    by_name = {
        a.lname: a.concept
        for a in ConceptAlias.objects.select_related("concept")
        .annotate(lname=Lower("name"))
        .filter(lname__in=[clean_name(n).lower() for n in names])
    }
    wanted = {n: name_key(n)[:200] for n in names if clean_name(n).lower() not in by_name}
    by_key: dict[str, Concept] = {}
    if any(wanted.values()):
        for a in (
            ConceptAlias.objects.select_related("concept")
            .filter(key__in=[k for k in wanted.values() if k])
            .order_by("kind", "pk")
        ):
            by_key.setdefault(a.key, a.concept)
    out = {}
    for n in names:
        concept = by_name.get(clean_name(n).lower()) or by_key.get(wanted.get(n, ""))
        if concept is not None:
            out[n] = concept
    return out


def edges_active() -> QuerySet[Edge]:
    return Edge.objects.filter(status=Edge.Status.ACTIVE)


def edges_as_of(*, at: datetime) -> QuerySet[Edge]:
    """The edges the graph asserted at time ``at``.

    An edge counts when the graph had recorded it by ``at``, the fact already held at
    ``at`` (``valid_at``), and it had not been retired (``invalid_at``) by then.
    Superseded and invalidated rows therefore still answer questions about the past.
    """
    return Edge.objects.filter(recorded_at__lte=at, valid_at__lte=at).filter(
        Q(invalid_at__isnull=True) | Q(invalid_at__gt=at)
    )


def active_edge_between(*, source_id: int, target_id: int, relation: RelationType) -> Edge | None:
    """The active edge holding this fact, in either direction for a symmetric relation."""
    pair = Q(source_id=source_id, target_id=target_id)
    if relation.symmetric:
        pair |= Q(source_id=target_id, target_id=source_id)
    return edges_active().filter(pair, relation=relation).first()


def _reachable_sql() -> str:
    edge = Edge._meta.db_table
    # UNION (not UNION ALL) on a single column visits each concept once, so the query
    # terminates on any graph, cyclic or not.
    return f"""
        WITH RECURSIVE reach(node) AS (
            SELECT CAST(%s AS BIGINT)
            UNION
            SELECT e.target_id FROM {edge} e JOIN reach r ON e.source_id = r.node
            WHERE e.relation_id = %s AND e.status = 'active'
        )
        SELECT 1 FROM reach WHERE node = %s LIMIT 1
    """


def relation_reaches(*, relation: RelationType, start_id: int, goal_id: int) -> bool:
    """Whether active edges of ``relation`` lead from ``start_id`` to ``goal_id``."""
    with connection.cursor() as cursor:
        cursor.execute(_reachable_sql(), [start_id, relation.pk, goal_id])
        return cursor.fetchone() is not None


def relation_path(*, relation: RelationType, start_id: int, goal_id: int) -> list[int] | None:
    """The shortest chain of concept ids from start to goal along active edges, or None.

    A recursive query decides reachability in one round trip; the path itself is only
    rebuilt (breadth first, one query per level) when there is one, which is the rare,
    error-reporting case.
    """
    if start_id == goal_id:
        return [start_id]
    if not relation_reaches(relation=relation, start_id=start_id, goal_id=goal_id):
        return None
    parents: dict[int, int] = {}
    frontier = {start_id}
    seen = {start_id}
    while frontier:
        rows = edges_active().filter(relation=relation, source_id__in=frontier)
        next_frontier: set[int] = set()
        for src, dst in rows.values_list("source_id", "target_id"):
            if dst in seen:
                continue
            seen.add(dst)
            parents[dst] = src
            if dst == goal_id:
                path = [dst]
                while path[-1] != start_id:
                    path.append(parents[path[-1]])
                return list(reversed(path))
            next_frontier.add(dst)
        frontier = next_frontier
    return None  # pragma: no cover - reachability said yes; a concurrent change said no


@dataclass(frozen=True)
class RelationRow:
    id: int
    active: bool
    spec: RelationSpec


def relation_table() -> list[RelationRow]:
    """Every relation type (retired ones too: their edges still exist), in one query."""
    return [
        RelationRow(
            id=r.pk,
            active=r.active,
            spec=RelationSpec(
                key=r.key,
                label=r.label,
                verb=r.verb,
                description=r.description,
                symmetric=r.symmetric,
                acyclic=r.acyclic,
            ),
        )
        for r in RelationType.objects.order_by("key")
    ]


def concept_names(ids: Iterable[int]) -> dict[int, str]:
    return dict(Concept.objects.filter(pk__in=list(ids)).values_list("pk", "name"))


def source_list() -> QuerySet:
    """Sources by title with their revision count, for the curriculum page."""
    return (
        Source.objects.select_related("current_revision")
        .defer("current_revision__text", "current_revision__structure")
        .annotate(n_revisions=Count("revisions"), ltitle=Lower("title"))
        .order_by("ltitle", "slug")
    )


def graph_totals() -> dict[str, int]:
    """Sources, active concepts and active edges, counted."""
    return {
        "sources": Source.objects.count(),
        "concepts": Concept.objects.filter(status=Concept.Status.ACTIVE).count(),
        "edges": edges_active().count(),
    }


def edge_precheck(
    *, relation: RelationType, source_id: int, target_id: int
) -> tuple[int | None, bool]:
    """One round trip: the active edge that already holds this fact (if any), and whether
    adding it would close a cycle (only asked for acyclic relations).

    The recursive part stops as soon as the source turns up (``LIMIT 1``).
    """
    edge = Edge._meta.db_table
    symmetric = 1 if relation.symmetric else 0
    acyclic = 1 if relation.acyclic else 0
    sql = f"""
        WITH RECURSIVE reach(node) AS (
            SELECT CAST(%s AS BIGINT) WHERE %s = 1
            UNION
            SELECT e.target_id FROM {edge} e JOIN reach r ON e.source_id = r.node
            WHERE e.relation_id = %s AND e.status = 'active'
        )
        SELECT
          (SELECT id FROM {edge}
            WHERE status = 'active' AND relation_id = %s
              AND ((source_id = %s AND target_id = %s)
                   OR (%s = 1 AND source_id = %s AND target_id = %s))
            LIMIT 1),
          (SELECT 1 FROM reach WHERE node = %s LIMIT 1)
    """
    params = [
        target_id,
        acyclic,
        relation.pk,
        relation.pk,
        source_id,
        target_id,
        symmetric,
        target_id,
        source_id,
        source_id,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        existing, cycle = cursor.fetchone()
    return existing, bool(cycle)


# --- Pages ------------------------------------------------------------------------------

CONCEPT_PAGE = 100


def active_edge_counts(ids) -> dict[int, int]:
    """Active edges touching each concept (in or out), for every id given; two grouped
    queries. A self-loop counts twice, once per end."""
    ids = list(ids)
    counts = dict.fromkeys(ids, 0)
    if not ids:
        return counts
    for end in ("source_id", "target_id"):
        for cid, n in tally(edges_active().filter(**{f"{end}__in": ids}), end).items():
            counts[cid] += n
    return counts


def concept_page(*, q: str = "", show: str = "active", after: str = "") -> tuple[list, str]:
    """A page of concepts in name order (keyset on the name), with their edge counts."""
    from .models import SourceConcept

    qs = Concept.objects.all()
    if show in ("active", "orphans"):
        qs = qs.filter(status=Concept.Status.ACTIVE)
    elif show in ("merged", "retired"):
        qs = qs.filter(status=show)
    if show == "orphans":
        qs = qs.exclude(
            Q(outgoing_edges__status=Edge.Status.ACTIVE)
            | Q(incoming_edges__status=Edge.Status.ACTIVE)
        )
    if q:
        qs = qs.filter(Q(name__icontains=q) | Q(aliases__name__icontains=q)).distinct()
    if after:
        qs = qs.filter(name__gt=after)
    rows = list(qs.select_related("merged_into").order_by("name")[: CONCEPT_PAGE + 1])
    more = len(rows) > CONCEPT_PAGE
    rows = rows[:CONCEPT_PAGE]
    ids = [c.pk for c in rows]
    counts = active_edge_counts(ids)
    sources = tally(SourceConcept.objects.filter(concept_id__in=ids), "concept_id")
    for c in rows:
        c.edge_count = counts.get(c.pk, 0)
        c.source_count = sources.get(c.pk, 0)
    return rows, (rows[-1].name if more and rows else "")


def concept_profile(concept: Concept) -> dict:
    """What the graph knows of a concept: names, edges both ways, sources, merges. (Its
    open proposals are review's: ``kgreview.review.pending.open_proposals_touching``.)"""
    from .models import SourceConcept

    edges = list(
        Edge.objects.filter(Q(source=concept) | Q(target=concept), status=Edge.Status.ACTIVE)
        .select_related("source", "target", "relation")
        .order_by("relation__key", "pk")[:300]
    )
    return {
        "concept": concept,
        "names": list(concept.aliases.order_by("kind", "name")),
        "outgoing": [e for e in edges if e.source_id == concept.pk],
        "incoming": [e for e in edges if e.target_id == concept.pk],
        "retired_edges": Edge.objects.filter(Q(source=concept) | Q(target=concept))
        .exclude(status=Edge.Status.ACTIVE)
        .count(),
        "sources": list(
            SourceConcept.objects.filter(concept=concept)
            .select_related("source", "revision")
            .defer("revision__text")
            .order_by("source__slug")
        ),
        "merged_from": list(concept.merged_from.order_by("name")),
    }


def relation_overview() -> list[RelationType]:
    """Every relation type with its active edges counted, active ones first."""
    return list(
        RelationType.objects.annotate(
            active_edges=Count("edges", filter=Q(edges__status=Edge.Status.ACTIVE), distinct=True)
        ).order_by("-active", "key")
    )
