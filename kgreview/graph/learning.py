"""Learning paths: a target's prerequisite closure, read by recursive SQL along the
relations that order study, and put in a valid study order (levels, then names).

The walk is bounded by concepts (``KG_LEARNING_PATH_LIMIT``, or ``depth`` levels); the
edges it reads are the same bi-temporal reads as ``traversal``'s, so ``at`` reads the
graph as it stood then.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from django.conf import settings
from django.db import connection

from .traversal import MAX_DEPTH, edge_condition_sql, edge_table, id_rows


def learning_path_limit() -> int:
    """The most concepts a learning path holds (``KG_LEARNING_PATH_LIMIT``)."""
    return settings.KG_LEARNING_PATH_LIMIT


# How each relation orders study: for "A is a prerequisite for B", A comes first; for
# "A builds on B", B comes first. A relation missing here does not order study.
STUDY_ORDER: dict[str, Literal["source_first", "target_first"]] = {
    "prerequisite": "source_first",
    "builds_on": "target_first",
}


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
    cond, cond_params = edge_condition_sql("e", at)
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
    table = edge_table()
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
            f" (SELECT {columns} FROM {edge_table()} e WHERE {step} OFFSET 0) x"
        )
        params = [*seed_params, *study.case_params, *study.case_params, *step_params]
    else:
        sql = f"SELECT {columns} FROM ({seed}) n JOIN {edge_table()} e ON {step}"
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
