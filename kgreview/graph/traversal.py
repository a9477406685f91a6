"""Multi-hop reads of the graph as recursive SQL (SQLite and PostgreSQL alike).

Every query takes ``at``: ``None`` reads the live graph (active edges), an instant reads
the graph as it stood then (the bi-temporal filter of ``selectors.edges_as_of``). Every
walk is bounded (a depth and a row limit) and cycle-safe: ``UNION`` (never ``UNION
ALL``) in the recursive term keeps each (node, depth) pair once, so a cycle can only
repeat a node at a greater depth, and the depth bound ends it. The unbounded ancestor
walk of a learning path keeps each node once, so it ends on any graph.

The recursive term joins an adjacency subquery (``a`` → ``b``) that is a ``UNION ALL`` of
index scans of the edge table: ``edge_source_status`` / ``edge_target_status`` for the
live graph, the same indexes' leading column for the past.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.db import connection
from django.db.models import F

from . import vocabulary
from .models import Edge

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[str, ...] = ("out", "in", "both")
MAX_DEPTH = 6
NODE_LIMIT = 2000
#: The most concepts each half of a shortest-path search meets.
ANCESTOR_LIMIT = 20000


def edge_table() -> str:
    return Edge._meta.db_table


def edge_condition_sql(alias: str, at: datetime | None) -> tuple[str, list]:
    """SQL that keeps the edges the graph asserted (now, or at ``at``)."""
    if at is None:
        return f"{alias}.status = 'active'", []
    value = connection.ops.adapt_datetimefield_value(at)
    return (
        f"{alias}.recorded_at <= %s AND {alias}.valid_at <= %s "
        f"AND ({alias}.invalid_at IS NULL OR {alias}.invalid_at > %s)",
        [value, value, value],
    )


#: The same condition for other reads of the graph at an instant (``graph.asking``).
edge_condition = edge_condition_sql


def _relation_condition(alias: str, relation_ids: Sequence[int] | None) -> tuple[str, list]:
    if not relation_ids:
        return "", []
    marks = ", ".join(["%s"] * len(relation_ids))
    # Unary plus keeps planners off the (relation, status) index: a walk must probe
    # edges by the concept it stands on, never scan every edge of a relation.
    return f" AND +{alias}.relation_id IN ({marks})", [int(r) for r in relation_ids]


def _has_symmetric(relation_ids: Sequence[int] | None) -> bool:
    # The vocabulary's shapes are held per process: no query per walk.
    return vocabulary.any_symmetric(relation_ids)


def _step(
    direction: str,
    relation_ids: Sequence[int] | None,
    at: datetime | None,
    *,
    node: str,
    symmetric: bool,
) -> tuple[str, str, list]:
    """How a walk standing on ``node`` steps along one edge ``e``: the join condition,
    the expression for the concept it reaches, and the parameters of the condition.

    The join is an OR of index probes (``edge_source_status``, ``edge_target_status``);
    both SQLite (multi-index OR) and PostgreSQL (BitmapOr) answer it per step without
    reading the table. Symmetric edges are stored once but walked both ways (``symmetric``
    says whether the chosen relations include any).
    """
    cond, cond_params = edge_condition_sql("e", at)
    rel, rel_params = _relation_condition("e", relation_ids)
    if direction == "both":
        join = f"(e.source_id = {node} OR e.target_id = {node})"
        reach = f"CASE WHEN e.source_id = {node} THEN e.target_id ELSE e.source_id END"
    elif direction == "out":
        join = f"(e.source_id = {node}" + (
            f" OR (e.target_id = {node} AND e.is_symmetric))" if symmetric else ")"
        )
        reach = f"CASE WHEN e.source_id = {node} THEN e.target_id ELSE e.source_id END"
    else:
        join = f"(e.target_id = {node}" + (
            f" OR (e.source_id = {node} AND e.is_symmetric))" if symmetric else ")"
        )
        reach = f"CASE WHEN e.target_id = {node} THEN e.source_id ELSE e.target_id END"
    return f"{join} AND {cond}{rel}", reach, cond_params + rel_params


#: Walks that mix directions: (direction, relation ids, whether any is symmetric) per
#: group; an edge may be stepped along when any group allows it.
Groups = tuple[tuple[str, tuple[int, ...], bool], ...]


def _reverse(groups: Groups) -> Groups:
    return tuple((REVERSE[d], ids, sym) for d, ids, sym in groups)


def step_groups(groups: Groups, at: datetime | None, *, node: str) -> tuple[str, str, list]:
    """``_step`` for several groups at once: an OR of each group's index probes. The
    concept reached is the edge's other end (edges never loop onto one concept)."""
    if len(groups) == 1:
        direction, ids, sym = groups[0]
        return _step(direction, ids or None, at, node=node, symmetric=sym)
    parts, params = [], []
    for direction, ids, sym in groups:
        join, _reach, more = _step(direction, ids or None, at, node=node, symmetric=sym)
        parts.append(f"({join})")
        params += more
    reach = f"CASE WHEN e.source_id = {node} THEN e.target_id ELSE e.source_id END"
    return "(" + " OR ".join(parts) + ")", reach, params


@dataclass(frozen=True)
class Ball:
    """The concepts within ``depth`` steps of a start, each with its distance."""

    start_id: int
    depth: int
    distance: dict[int, int]
    truncated: bool


def ball(
    *,
    start_id: int,
    depth: int,
    direction: str = "both",
    relation_ids: Sequence[int] | None = None,
    at: datetime | None = None,
    limit: int = NODE_LIMIT,
    symmetric: bool | None = None,
    groups: Groups | None = None,
) -> Ball:
    """Concepts reachable from ``start_id`` in at most ``depth`` steps, nearest first.

    One round trip, bounded by concepts: the walk yields (concept, depth) rows level by
    level and stops once it has produced enough of them to hold ``limit + 1`` concepts
    (each concept comes at most once per depth), so a hub or a deep walk costs what
    ``limit`` concepts cost, never the whole graph. ``truncated`` says more than ``limit``
    concepts were within reach and only the nearest ``limit`` are returned. ``groups``
    (instead of ``direction`` and ``relation_ids``) walks each group of relations its own
    way.
    """
    depth = max(0, min(int(depth), MAX_DEPTH))
    if groups is None:
        if symmetric is None:
            symmetric = _has_symmetric(relation_ids)
        groups = ((direction, tuple(relation_ids or ()), symmetric),)
    join, reach, params = step_groups(groups, at, node="walk.node")
    rows_cap = (limit + 1) * (depth + 1)
    # No ORDER BY or GROUP BY outside the walk: both databases then evaluate the
    # recursion only as far as the LIMIT reads it, breadth first (PostgreSQL's working
    # table, SQLite's queue), so the first row of a concept carries its least depth.
    sql = f"""
        WITH RECURSIVE walk(node, depth) AS (
            SELECT CAST(%s AS BIGINT), 0
            UNION
            SELECT {reach}, walk.depth + 1
            FROM walk JOIN {edge_table()} e ON {join}
            WHERE walk.depth < %s
        )
        SELECT node, depth FROM walk LIMIT %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [int(start_id), *params, depth, rows_cap])
        rows = cursor.fetchall()
    distance: dict[int, int] = {}
    for node, d in rows:
        distance.setdefault(int(node), int(d))
    truncated = len(distance) > limit or len(rows) >= rows_cap
    nearest = sorted(distance.items(), key=lambda item: (item[1], item[0]))[:limit]
    return Ball(start_id=int(start_id), depth=depth, distance=dict(nearest), truncated=truncated)


def edges_within(
    *,
    node_ids: Iterable[int],
    relation_ids: Sequence[int] | None = None,
    at: datetime | None = None,
):
    """The edges (as of ``at``) whose two ends are both among ``node_ids``."""
    from .selectors import edges_active, edges_as_of

    ids = list(node_ids)
    qs = edges_active() if at is None else edges_as_of(at=at)
    qs = qs.filter(source_id__in=ids, target_id__in=ids)
    if relation_ids:
        # relation_id + 0, like the unary plus of the walks: the ends select the rows,
        # never the (relation, status) index and every edge of a type.
        qs = qs.alias(rel=F("relation_id") + 0).filter(rel__in=[int(r) for r in relation_ids])
    return qs


# --- Paths ------------------------------------------------------------------------------

REVERSE = {"out": "in", "in": "out", "both": "both"}


@dataclass(frozen=True)
class Hop:
    """One step of a path: from ``from_id`` to ``to_id`` along ``edge_id``."""

    from_id: int
    to_id: int
    edge_id: int


def _steps_from(node_id: int, *, groups: Groups, at: datetime | None) -> list[tuple[int, int]]:
    """The concepts one step from ``node_id`` and the edges that lead there."""
    join, reach, params = step_groups(groups, at, node="s.node")
    sql = (
        f"SELECT {reach} AS b, e.id FROM (SELECT CAST(%s AS BIGINT) AS node) s "
        f"JOIN {edge_table()} e ON {join} ORDER BY b, e.id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [int(node_id), *params])
        return [(int(b), int(e)) for b, e in cursor.fetchall()]


def shortest_path(
    *,
    start_id: int,
    goal_id: int,
    direction: str = "out",
    relation_ids: Sequence[int] | None = None,
    at: datetime | None = None,
    max_depth: int = 4,
    groups: Groups | None = None,
) -> list[Hop] | None:
    """A shortest chain of edges from start to goal within ``max_depth`` steps, or None.

    Meet in the middle: one recursive query walks half the depth forward from the
    start, another half backward from the goal; the best meeting concept fixes the
    length, and each half is traced back one step per query along concepts one step
    nearer their end. At most ``2 + max_depth`` round trips, whatever the graph's size.
    ``groups`` (instead of ``direction`` and ``relation_ids``) walks each group of
    relations its own way.
    """
    if start_id == goal_id:
        return []
    max_depth = max(1, min(int(max_depth), MAX_DEPTH))
    half_out = (max_depth + 1) // 2
    if groups is None:
        symmetric = _has_symmetric(relation_ids)
        groups = ((direction, tuple(relation_ids or ()), symmetric),)
    back = _reverse(groups)
    walk: dict[str, Any] = {"at": at, "limit": ANCESTOR_LIMIT}
    fwd = ball(start_id=start_id, depth=half_out, groups=groups, **walk)
    bwd = ball(start_id=goal_id, depth=max_depth - half_out, groups=back, **walk)
    common = fwd.distance.keys() & bwd.distance.keys()
    if not common:
        return None
    meet = min(common, key=lambda n: (fwd.distance[n] + bwd.distance[n], n))
    to_start = _trace(fwd.distance, meet, groups=back, at=at)
    to_goal = _trace(bwd.distance, meet, groups=groups, at=at)
    if to_start is None or to_goal is None:  # pragma: no cover - the balls said they join
        return None
    return [Hop(from_id=b, to_id=a, edge_id=e) for a, b, e in reversed(to_start)] + [
        Hop(from_id=a, to_id=b, edge_id=e) for a, b, e in to_goal
    ]


def _trace(
    distance: dict[int, int],
    node: int,
    *,
    groups: Groups,
    at: datetime | None,
) -> list[tuple[int, int, int]] | None:
    """The steps from ``node`` back to the centre of the ball that measured ``distance``,
    each to a neighbour one step nearer, as (from, to, edge) in walking order."""
    steps: list[tuple[int, int, int]] = []
    while distance[node] > 0:
        want = distance[node] - 1
        for nearer, eid in _steps_from(node, groups=groups, at=at):
            if distance.get(nearer) == want:
                steps.append((node, nearer, eid))
                node = nearer
                break
        else:  # pragma: no cover - the ball said a nearer neighbour exists
            return None
    return steps


# --- SQL helpers for id lists ------------------------------------------------------------


def one_of(column: str, values: Sequence[int]) -> tuple[str, list]:
    """``column`` is one of ``values``: one array parameter on PostgreSQL (the driver
    binds on the client, and thousands of placeholders cost more to format and parse
    than the query takes to run), an ``IN`` list elsewhere (SQLite takes 32,766)."""
    if connection.vendor == "postgresql":
        return f"{column} = ANY(%s)", [list(values)]
    return f"{column} IN ({', '.join(['%s'] * len(values))})", list(values)


def id_rows(values: Sequence[int]) -> tuple[str, list]:
    """A SELECT of the given ids, one per row, in a column named ``node``: one array
    parameter on PostgreSQL, one JSON parameter on SQLite, however many ids."""
    if connection.vendor == "postgresql":
        return "SELECT unnest(CAST(%s AS BIGINT[])) AS node", [list(values)]
    return "SELECT value AS node FROM json_each(%s)", [json.dumps([int(v) for v in values])]
