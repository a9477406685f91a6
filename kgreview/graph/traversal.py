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

import heapq
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from django.conf import settings
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


def learning_path_limit() -> int:
    """The most concepts a learning path holds (``KG_LEARNING_PATH_LIMIT``)."""
    return settings.KG_LEARNING_PATH_LIMIT


# How each relation orders study: for "A is a prerequisite for B", A comes first; for
# "A builds on B", B comes first. A relation missing here does not order study.
STUDY_ORDER: dict[str, Literal["source_first", "target_first"]] = {
    "prerequisite": "source_first",
    "builds_on": "target_first",
}


def _table() -> str:
    return Edge._meta.db_table


def _edge_condition(alias: str, at: datetime | None) -> tuple[str, list]:
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
edge_condition = _edge_condition


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
    cond, cond_params = _edge_condition("e", at)
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
            FROM walk JOIN {_table()} e ON {join}
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
        f"JOIN {_table()} e ON {join} ORDER BY b, e.id"
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


# --- Learning paths ---------------------------------------------------------------------


@dataclass(frozen=True)
class StudyEdge:
    """``before_id`` must be studied before ``after_id`` because of ``edge_id``."""

    before_id: int
    after_id: int
    edge_id: int
    relation_id: int


@dataclass
class LearningPath:
    """A target's prerequisite closure in a valid study order.

    ``order`` lists concepts that can be studied in sequence, each after everything it
    needs; ``cycle`` (when the closure has one) names the concepts of one cycle, which
    no order can satisfy, and ``blocked`` the concepts that wait on it.
    """

    target_id: int
    names: dict[int, str] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    level: dict[int, int] = field(default_factory=dict)
    needs: dict[int, list[StudyEdge]] = field(default_factory=dict)
    cycle: list[StudyEdge] = field(default_factory=list)
    blocked: list[int] = field(default_factory=list)
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return not self.cycle


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


@dataclass(frozen=True)
class _StudySql:
    """How a walk along the ordering relations reads an edge: the concept to study
    first (``earlier``), the one that needs it (``later``), and the condition that an
    edge is a need of the concept ``node`` stands on."""

    earlier: str
    later: str
    case_params: list
    needs: Callable[[str], tuple[str, list]]


def _study_sql(relations: Mapping[int, str], at: datetime | None) -> _StudySql | None:
    cond, cond_params = _edge_condition("e", at)
    src_first = [int(r) for r, how in relations.items() if how == "source_first"]
    tgt_first = [int(r) for r, how in relations.items() if how == "target_first"]
    if not src_first and not tgt_first:
        return None
    m1 = ", ".join(["%s"] * len(src_first))
    m2 = ", ".join(["%s"] * len(tgt_first))

    def needs(node: str) -> tuple[str, list]:
        # Standing on a concept, the edges that name what must come before it.
        parts, params = [], []
        if src_first:
            parts.append(f"(e.target_id = {node} AND +e.relation_id IN ({m1}))")
            params += src_first
        if tgt_first:
            parts.append(f"(e.source_id = {node} AND +e.relation_id IN ({m2}))")
            params += tgt_first
        return f"({' OR '.join(parts)}) AND {cond}", params + cond_params

    if not tgt_first:
        return _StudySql("e.source_id", "e.target_id", [], needs)
    if not src_first:
        return _StudySql("e.target_id", "e.source_id", [], needs)
    return _StudySql(
        f"CASE WHEN e.relation_id IN ({m1}) THEN e.source_id ELSE e.target_id END",
        f"CASE WHEN e.relation_id IN ({m1}) THEN e.target_id ELSE e.source_id END",
        src_first,
        needs,
    )


def closure(
    *,
    target_id: int,
    relations: Mapping[int, str],
    at: datetime | None = None,
    limit: int | None = None,
    depth: int | None = None,
) -> tuple[list[int], bool]:
    """The target and the concepts it needs, nearest first, at most ``limit`` of them
    (the target included), and whether more exist. ``depth`` keeps only the needs at
    most that many steps away.

    One round trip bounded by concepts: the walk keeps each concept once (once per
    depth with a ``depth``) and has no ordering or grouping outside it, so both
    databases stop it as soon as the ``LIMIT`` has read enough rows.
    """
    limit = limit or learning_path_limit()
    study = _study_sql(relations, at)
    if study is None:
        return [int(target_id)], False
    step, step_params = study.needs("n.node")
    table = _table()
    if depth is None:
        sql = f"""
            WITH RECURSIVE need(node) AS (
                SELECT CAST(%s AS BIGINT)
                UNION
                SELECT {study.earlier} FROM need n JOIN {table} e ON {step}
            )
            SELECT node, 0 FROM need LIMIT %s
        """
        params = [int(target_id), *study.case_params, *step_params, limit + 1]
    else:
        depth = max(1, min(int(depth), MAX_DEPTH))
        sql = f"""
            WITH RECURSIVE need(node, depth) AS (
                SELECT CAST(%s AS BIGINT), 0
                UNION
                SELECT {study.earlier}, n.depth + 1 FROM need n JOIN {table} e ON {step}
                WHERE n.depth < %s
            )
            SELECT node, depth FROM need LIMIT %s
        """
        cap = (limit + 1) * (depth + 1)
        params = [int(target_id), *study.case_params, *step_params, depth, cap]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    nodes = list(dict.fromkeys(int(n) for n, _d in rows))
    return nodes[:limit], len(nodes) > limit or (depth is not None and len(rows) >= cap)


def study_edges(
    *,
    target_id: int,
    relations: Mapping[int, str],
    at: datetime | None = None,
    limit: int | None = None,
    depth: int | None = None,
) -> tuple[list[StudyEdge], bool]:
    """Every ordering edge among the target and the concepts it needs (at most ``limit``
    concepts, the target included, nearest first; ``depth`` steps at most), and whether
    the closure was cut. Two round trips: ``closure``, then the edges among its
    concepts.

    ``relations`` maps relation ids to ``source_first`` or ``target_first``.
    """
    nodes, truncated = closure(
        target_id=target_id, relations=relations, at=at, limit=limit, depth=depth
    )
    study = _study_sql(relations, at)
    if study is None or len(nodes) < 2:
        return [], truncated
    # The needs of every concept of the closure, one index probe per concept (as the
    # walk made them): a list of thousands of ids in an ``IN`` or ``ANY`` would be
    # checked against every edge of the relation instead.
    seed, seed_params = id_rows(nodes)
    step, step_params = study.needs("n.node")
    columns = f"{study.earlier}, {study.later}, e.id, e.relation_id"
    if connection.vendor == "postgresql":
        # A LATERAL subquery kept apart by OFFSET 0 (which stops the planner from
        # flattening it) probes the index per concept; a plain join of a few thousand
        # ids is costed as a hash join over every edge of the relation.
        sql = (
            f"SELECT x.* FROM ({seed}) n CROSS JOIN LATERAL"
            f" (SELECT {columns} FROM {_table()} e WHERE {step} OFFSET 0) x"
        )
        params = [*seed_params, *study.case_params, *study.case_params, *step_params]
    else:
        sql = f"SELECT {columns} FROM ({seed}) n JOIN {_table()} e ON {step}"
        params = [*study.case_params, *study.case_params, *seed_params, *step_params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if truncated or depth is not None:  # a cut closure: keep the needs it holds
        kept = set(nodes)
        rows = [r for r in rows if r[0] in kept]
    rows.sort(key=lambda r: (r[1], r[0], r[2]))
    edges = [
        StudyEdge(before_id=int(a), after_id=int(b), edge_id=int(e), relation_id=int(r))
        for a, b, e, r in rows
    ]
    return edges, truncated


def learning_path(
    *,
    target_id: int,
    relations: Mapping[int, str],
    at: datetime | None = None,
    names: dict[int, str] | None = None,
    name_lookup: Callable[[set[int]], dict[int, str]] | None = None,
    limit: int | None = None,
    depth: int | None = None,
    study: tuple[list[StudyEdge], bool] | None = None,
) -> LearningPath:
    """Order the target's closure so each concept follows everything it needs.

    Kahn's algorithm; among the concepts ready at once the shallower level (the longest
    chain of needs below it) goes first, then the name, so the order is stable and reads
    from foundations up. Concepts left over sit on or behind a cycle; one cycle is
    traced back along unmet needs and named. ``name_lookup`` fetches the names of the
    closure's concepts (for the tie-break) once the walk has found them. ``limit`` bounds
    the closure's concepts, the nearest kept (``truncated`` says it was cut); ``depth``
    keeps the needs at most that many steps away. ``study`` gives the ordering edges
    already read (and whether they were cut) instead of reading them here.
    """
    if study is None:
        study = study_edges(
            target_id=target_id, relations=relations, at=at, limit=limit, depth=depth
        )
    edges, truncated = study
    if name_lookup is not None:
        names = name_lookup({target_id} | {e.before_id for e in edges})
    names = names or {}
    nodes = {target_id}
    needs: dict[int, list[StudyEdge]] = defaultdict(list)
    unlocks: dict[int, list[StudyEdge]] = defaultdict(list)
    for e in edges:
        nodes.add(e.before_id)
        nodes.add(e.after_id)
        needs[e.after_id].append(e)
        unlocks[e.before_id].append(e)
    waiting = {n: len({e.before_id for e in needs[n]}) for n in nodes}
    met: dict[int, set[int]] = defaultdict(set)
    level: dict[int, int] = {}
    ready = [(0, names.get(n, ""), n) for n in nodes if waiting[n] == 0]
    heapq.heapify(ready)
    for _lvl, _name, n in ready:
        level[n] = 0
    order: list[int] = []
    while ready:
        lvl, _name, n = heapq.heappop(ready)
        order.append(n)
        for e in unlocks[n]:
            after = e.after_id
            if n in met[after]:
                continue
            met[after].add(n)
            level[after] = max(level.get(after, 0), lvl + 1)
            if len(met[after]) == waiting[after]:
                heapq.heappush(ready, (level[after], names.get(after, ""), after))
    path = LearningPath(
        target_id=target_id,
        names=names,
        order=order,
        level=level,
        needs={n: needs[n] for n in order},
        truncated=truncated,
    )
    left = nodes - set(order)
    if left:
        path.cycle = _trace_cycle(left, needs)
        path.blocked = sorted(
            left - {e.after_id for e in path.cycle}, key=lambda n: names.get(n, "")
        )
    return path


def _trace_cycle(left: set[int], needs: dict[int, list[StudyEdge]]) -> list[StudyEdge]:
    """One cycle among ``left``: every concept there has an unmet need inside it."""
    start = min(left)
    seen: dict[int, int] = {}
    trail: list[StudyEdge] = []
    node = start
    while node not in seen:
        seen[node] = len(trail)
        step = min((e for e in needs[node] if e.before_id in left), key=lambda e: e.before_id)
        trail.append(step)
        node = step.before_id
    cycle = trail[seen[node] :]
    # Walked backwards along needs; read it forwards (each concept before the next).
    return list(reversed(cycle))
