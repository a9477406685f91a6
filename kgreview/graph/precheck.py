"""The one read an edge's write starts from (``edge_precheck``): the fact already held,
and, in an acyclic relation, whether the new edge would close a cycle and where its ends
stand in the relation's order, in one round trip. ``graph.order`` places the ends from it;
``graph.services.rows`` refuses from it."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.db import connection

from .models import ConceptOrder, Edge, RelationType
from .selectors import edges_active, fact_q

log = logging.getLogger(__name__)

#: Concepts one side of the accept-time cycle search may visit (``edge_precheck``).
REACH_LIMIT = 2_000
#: An acyclic relation with at most this many active edges is small enough to have its
#: order rebuilt inside the write that finds it out of order (``kgreview.graph.order``).
INLINE_REBUILD = 5_000


@dataclass(frozen=True)
class Precheck:
    """What adding ``source -> target`` must know, read in one round trip.

    ``existing``: the active edge already holding the fact. For an acyclic relation also
    where the ends stand in its topological order (``ConceptOrder``; None: not placed)
    and what ``kgreview.graph.order.place`` needs to keep that order: whether the source
    has edges coming in and the target edges going out, the lowest and highest positions,
    the neighbouring positions of the ends, whether rows written past the services wait
    to be taken in (``stray``), and, when the new edge runs against the order, the bounded
    searches: ``ahead`` (concepts the target leads to) and ``behind`` (concepts leading to
    the source), each concept with its position, each ``closed`` when it ended before
    ``REACH_LIMIT``. In an ordered relation both searches stay within the positions
    between the ends; otherwise they run unbounded by position, bounded by count.
    """

    existing: int | None
    acyclic: bool = False
    ordered: bool = True
    source_at: int | None = None
    target_at: int | None = None
    source_has_in: bool = False
    target_has_out: bool = False
    stray: bool = False
    small: bool = False
    lowest: int | None = None
    highest: int | None = None
    after_source: int | None = None
    before_target: int | None = None
    ahead: dict[int, int | None] = field(default_factory=dict)
    behind: dict[int, int | None] = field(default_factory=dict)

    @property
    def ahead_closed(self) -> bool:
        return len(self.ahead) <= REACH_LIMIT

    @property
    def behind_closed(self) -> bool:
        return len(self.behind) <= REACH_LIMIT


def edge_precheck(*, relation: RelationType, source_id: int, target_id: int) -> Precheck:
    """One round trip: the active edge that already holds this fact (if any), and for an
    acyclic relation what keeping it acyclic needs (see ``Precheck``).

    Call it holding the relation's row lock (the services do): the searches read the
    order as the writers of the relation left it.
    """
    if not relation.acyclic:
        return Precheck(existing=_existing_edge(relation, source_id, target_id))
    params = {
        "r": relation.pk,
        # The inverse's edges may hold the fact as its twin (none: no relation has id 0).
        "ri": relation.inverse_id or 0,
        "u": source_id,
        "v": target_id,
        "limit": REACH_LIMIT + 1,
        "small": INLINE_REBUILD + 1,
    }
    with connection.cursor() as cursor:
        cursor.execute(_precheck_sql(connection.vendor), params)
        rows = cursor.fetchall()
    head = next(row for row in rows if row[0] == "h")
    existing, pu, pv, lo, hi, after_u, before_v, size, flags = head[1:]
    return Precheck(
        existing=existing,
        acyclic=True,
        ordered=bool(flags & 1),
        source_at=pu,
        target_at=pv,
        source_has_in=bool(flags & 2),
        target_has_out=bool(flags & 4),
        stray=bool(flags & 8),
        small=size is not None and size <= INLINE_REBUILD,
        lowest=lo,
        highest=hi,
        after_source=after_u,
        before_target=before_v,
        ahead={row[1]: row[2] for row in rows if row[0] == "f"},
        behind={row[1]: row[2] for row in rows if row[0] == "b"},
    )


def _existing_edge(relation: RelationType, source_id: int, target_id: int) -> int | None:
    """The active edge holding the fact (``fact_q``: either direction for a symmetric
    relation, or its inverse twin)."""
    found = edges_active().filter(fact_q(source_id, relation, target_id))
    return found.values_list("pk", flat=True).first()


def _precheck_sql(vendor: str) -> str:
    """The statement behind ``edge_precheck`` for an acyclic relation: a head row, then
    the concepts of the two searches, each with its position.

    Every part is an index lookup except the searches, which start only when the new edge
    runs against the order (or the relation has none) and both ends have edges to follow:
    forwards from the target, backwards from the source, within the positions between the
    ends, each stopped after ``REACH_LIMIT`` concepts. PostgreSQL evaluates a recursive
    query only as far as the rows fetched from it, so the limit goes outside it; SQLite
    takes a limit on the recursive query itself.
    """
    edge = Edge._meta.db_table
    order = ConceptOrder._meta.db_table
    relation = RelationType._meta.db_table
    inner, outer = ("", " LIMIT %(limit)s") if vendor == "postgresql" else (" LIMIT %(limit)s", "")
    active = "relation_id = %(r)s AND status = 'active'"
    place = f"SELECT position FROM {order} WHERE relation_id = %(r)s"
    return f"""
        WITH RECURSIVE head AS (
            SELECT
              COALESCE((SELECT id FROM {edge} WHERE {active} AND source_id = %(u)s
                 AND target_id = %(v)s), (SELECT id FROM {edge} WHERE relation_id = %(ri)s
                 AND status = 'active' AND source_id = %(v)s AND target_id = %(u)s))
                 AS existing,
              (SELECT ordered FROM {relation} WHERE id = %(r)s) AS ordered,
              ({place} AND concept_id = %(u)s) AS pu,
              ({place} AND concept_id = %(v)s) AS pv,
              EXISTS (SELECT 1 FROM {edge} WHERE target_id = %(u)s AND {active}) AS u_in,
              EXISTS (SELECT 1 FROM {edge} WHERE source_id = %(v)s AND {active}) AS v_out,
              EXISTS (SELECT 1 FROM {edge} WHERE {active} AND NOT in_order) AS stray
        ),
        span AS (
            SELECT head.*,
              (SELECT min(position) FROM {order} WHERE relation_id = %(r)s) AS lo,
              (SELECT max(position) FROM {order} WHERE relation_id = %(r)s) AS hi,
              (SELECT min(position) FROM {order} WHERE relation_id = %(r)s
                 AND position > head.pu) AS after_u,
              (SELECT max(position) FROM {order} WHERE relation_id = %(r)s
                 AND position < head.pv) AS before_v,
              CASE WHEN NOT ordered OR stray THEN (SELECT count(*) FROM (SELECT 1 FROM {edge}
                 WHERE {active} LIMIT %(small)s) AS counted) END AS size
            FROM head
        ),
        go AS (
            SELECT 1 AS yes FROM head
            WHERE existing IS NULL AND u_in AND v_out
              AND (NOT ordered OR (NOT stray AND pu > pv))
        ),
        ahead(node) AS (
            SELECT CAST(%(v)s AS BIGINT) FROM go
            UNION
            SELECT e.target_id FROM ahead
              JOIN {edge} e ON e.source_id = ahead.node
              CROSS JOIN head
              LEFT JOIN {order} o ON o.relation_id = %(r)s AND o.concept_id = e.target_id
            WHERE e.relation_id = %(r)s AND e.status = 'active'
              AND (NOT head.ordered OR o.position <= head.pu){inner}
        ),
        behind(node) AS (
            SELECT CAST(%(u)s AS BIGINT) FROM go
            UNION
            SELECT e.source_id FROM behind
              JOIN {edge} e ON e.target_id = behind.node
              CROSS JOIN head
              LEFT JOIN {order} o ON o.relation_id = %(r)s AND o.concept_id = e.source_id
            WHERE e.relation_id = %(r)s AND e.status = 'active'
              AND (NOT head.ordered OR o.position >= head.pv){inner}
        )
        SELECT 'h', existing, pu, pv, lo, hi, after_u, before_v, size,
               (CASE WHEN ordered THEN 1 ELSE 0 END) + (CASE WHEN u_in THEN 2 ELSE 0 END)
               + (CASE WHEN v_out THEN 4 ELSE 0 END) + (CASE WHEN stray THEN 8 ELSE 0 END)
        FROM span
        UNION ALL
        SELECT 'f', x.node, o.position, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        FROM (SELECT node FROM ahead{outer}) AS x
        LEFT JOIN {order} o ON o.relation_id = %(r)s AND o.concept_id = x.node
        UNION ALL
        SELECT 'b', x.node, o.position, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        FROM (SELECT node FROM behind{outer}) AS x
        LEFT JOIN {order} o ON o.relation_id = %(r)s AND o.concept_id = x.node
    """


# --- Pages ------------------------------------------------------------------------------
