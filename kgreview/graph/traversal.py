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
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from django.db import connection
from django.db.models import F

from .models import Edge

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[str, ...] = ("out", "in", "both")
MAX_DEPTH = 6
NODE_LIMIT = 2000
ANCESTOR_LIMIT = 20000

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
    from .models import RelationType

    if not relation_ids:
        return True
    return RelationType.objects.filter(pk__in=list(relation_ids), symmetric=True).exists()


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

    One round trip. ``truncated`` says the walk found more than ``limit`` concepts and
    only the nearest ``limit`` are returned. ``groups`` (instead of ``direction`` and
    ``relation_ids``) walks each group of relations its own way.
    """
    depth = max(0, min(int(depth), MAX_DEPTH))
    if groups is None:
        if symmetric is None:
            symmetric = _has_symmetric(relation_ids)
        groups = ((direction, tuple(relation_ids or ()), symmetric),)
    join, reach, params = step_groups(groups, at, node="walk.node")
    sql = f"""
        WITH RECURSIVE walk(node, depth) AS (
            SELECT CAST(%s AS BIGINT), 0
            UNION
            SELECT {reach}, walk.depth + 1
            FROM walk JOIN {_table()} e ON {join}
            WHERE walk.depth < %s
        )
        SELECT node, MIN(depth) AS d FROM walk GROUP BY node ORDER BY d, node LIMIT %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [int(start_id), *params, depth, limit + 1])
        rows = cursor.fetchall()
    truncated = len(rows) > limit
    return Ball(
        start_id=int(start_id),
        depth=depth,
        distance={int(n): int(d) for n, d in rows[:limit]},
        truncated=truncated,
    )


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


def study_edges(
    *,
    target_id: int,
    relations: dict[int, str],
    at: datetime | None = None,
    limit: int = ANCESTOR_LIMIT,
) -> tuple[list[StudyEdge], bool]:
    """Every ordering edge among the target and its ancestors, in one round trip.

    ``relations`` maps relation ids to ``source_first`` or ``target_first``. The walk
    keeps each concept once, so it ends on cyclic graphs too.
    """
    cond, cond_params = _edge_condition("e", at)
    table = _table()
    src_first = [int(r) for r, how in relations.items() if how == "source_first"]
    tgt_first = [int(r) for r, how in relations.items() if how == "target_first"]
    if not src_first and not tgt_first:
        return [], False
    m1 = ", ".join(["%s"] * len(src_first))
    m2 = ", ".join(["%s"] * len(tgt_first))

    def needs_of(node: str) -> tuple[str, list]:
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
        earlier, later, case_params = "e.source_id", "e.target_id", []
    elif not src_first:
        earlier, later, case_params = "e.target_id", "e.source_id", []
    else:
        earlier = f"CASE WHEN e.relation_id IN ({m1}) THEN e.source_id ELSE e.target_id END"
        later = f"CASE WHEN e.relation_id IN ({m1}) THEN e.target_id ELSE e.source_id END"
        case_params = src_first
    step_cond, step_params = needs_of("n.earlier")
    # Rows are edges; UNION drops an edge found again through another child, so each
    # edge (and so each concept's needs) is expanded once, on cyclic graphs too.
    sql = f"""
        WITH RECURSIVE needs(earlier, later, eid, rel) AS (
            SELECT {earlier}, {later}, e.id, e.relation_id
            FROM (SELECT CAST(%s AS BIGINT) AS earlier) n JOIN {table} e ON {step_cond}
            UNION
            SELECT {earlier}, {later}, e.id, e.relation_id
            FROM needs n JOIN {table} e ON {step_cond}
        )
        SELECT earlier, later, eid, rel FROM needs LIMIT %s
    """
    # The seed is a one-row "needs" standing on the target, so both halves share the
    # step; parameters bind in textual order.
    step = [*case_params, *case_params]
    params = [*step, int(target_id), *step_params, *step, *step_params, limit * 4 + 1]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    truncated = len(rows) > limit * 4
    rows.sort(key=lambda r: (r[1], r[0], r[2]))
    edges = [
        StudyEdge(before_id=int(a), after_id=int(b), edge_id=int(e), relation_id=int(r))
        for a, b, e, r in rows[: limit * 4]
    ]
    nodes = {e.after_id for e in edges} | {target_id}
    return edges, truncated or len(nodes) > limit


def learning_path(
    *,
    target_id: int,
    relations: dict[int, str],
    at: datetime | None = None,
    names: dict[int, str] | None = None,
    name_lookup: Callable[[set[int]], dict[int, str]] | None = None,
    limit: int = ANCESTOR_LIMIT,
    study: tuple[list[StudyEdge], bool] | None = None,
) -> LearningPath:
    """Order the target's closure so each concept follows everything it needs.

    Kahn's algorithm; among the concepts ready at once the shallower level (the longest
    chain of needs below it) goes first, then the name, so the order is stable and reads
    from foundations up. Concepts left over sit on or behind a cycle; one cycle is
    traced back along unmet needs and named. ``name_lookup`` fetches the names of the
    closure's concepts (for the tie-break) once the walk has found them. ``limit`` bounds
    the closure's concepts (``truncated`` says it was cut). ``study`` gives the ordering
    edges already read (and whether they were cut) instead of reading them here.
    """
    if study is None:
        study = study_edges(target_id=target_id, relations=relations, at=at, limit=limit)
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
