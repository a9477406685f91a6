"""Admitting a batch of new edges of acyclic relations at once, against their orders.

``admit_fact`` checks one edge in one round trip; a bulk accept of a thousand edges paid
that round trip, and an insert, a thousand times. Here the batch is checked as a set:

1. One read (``_read``) gives the position of every end in its relation's order, each
   relation's lowest and highest positions, whether rows written past the services wait
   to be taken in, and the active edges already holding a fact of the batch.
2. The batch's concepts new to a relation are placed at once (``order.new_places``).
3. The edges are then taken in the order given, as one by one would: an edge whose
   source stands before its target (positions kept in memory as the batch moves them)
   cannot close a cycle and is admitted with no statement at all. One that runs against
   the order is first looked up among the batch's own admitted edges in memory: when its
   target already leads back to its source through them, it closes a cycle and is
   refused with that chain. Otherwise what the batch admitted so far is written
   (``_flush``) and the edge goes through ``admit_fact``: its bounded Pearce and Kelly
   search, the refusal in its words, or the moves it needs, kept for the next write.
4. What is left is written in one insert of edges and one of positions.

So a batch whose edges agree with the orders costs a handful of statements whatever its
size, and each edge against an order a few more. A relation that is not ordered, or has
rows waiting to be taken in, is left to ``admit_fact`` edge by edge (it repairs or gives
up the order first, as for a single decision).

Callers hold the locks of ``lock_for_edge`` for every edge: the ends' concept rows, then
the acyclic relations' rows (``edges_add_checked`` takes the latter). Every refusal is the
one ``admit_fact`` gives, in the same words.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import IntegrityError, connection

from kgreview.core.errors import CycleDetected, CycleUnchecked, DomainError, DuplicateEdge

from . import order, rules
from .models import Concept, ConceptOrder, Edge, RelationType
from .services.rows import admit_fact

Item = tuple[Edge, Concept, Concept]


@dataclass
class _Relation:
    """What the batch knows of one acyclic relation's order while it admits edges."""

    relation: RelationType
    exact: bool  # ordered, nothing waiting to be taken in: positions decide
    lowest: int | None = None
    highest: int | None = None
    at: dict[int, int] = field(default_factory=dict)  # concept -> position, kept current
    following: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))


@dataclass
class _Batch:
    """The rows admitted and the positions moved, not written yet."""

    rows: list[Edge] = field(default_factory=list)
    moves: dict[tuple[int, int], int] = field(default_factory=dict)


def admit_many(
    items: Sequence[Item], relations: dict[int, RelationType]
) -> list[DomainError | None]:
    """Admit and insert the unsaved edge rows of ``items`` (all of acyclic ``relations``,
    their rows locked by the caller), in order; returns, per item, the refusal or None
    when its row was inserted (``row.pk`` set, ``row.in_order`` said)."""
    known, found = _read(items, relations)
    held: dict[tuple[int, int, int], int | Edge] = dict(found)
    batch = _Batch()
    for state in known.values():
        if state.exact:
            _place_new(state, items, batch)
    out: list[DomainError | None] = []
    for row, source, target in items:
        state = known[row.relation_id]
        facts = rules.fact_keys(source.pk, state.relation, target.pk)
        try:
            hit = next((k for k in facts if k in held), None)
            if hit is not None:
                holding: int | Edge = held[hit]
                holder = hit[1]
                if isinstance(holding, Edge):  # a repeat (or twin) the batch admitted
                    _flush(batch)
                    holder = holding.relation_id
                    holding = holding.pk
                raise rules.duplicate_refusal(
                    state.relation, source.name, target.name, holding, held_relation_id=holder
                )
            _admit(state, row, source, target, batch)
        except (DuplicateEdge, CycleDetected, CycleUnchecked) as exc:
            out.append(exc)
            continue
        held.update(dict.fromkeys(facts, row))
        out.append(None)
    _flush(batch)
    return out


def _admit(state: _Relation, row: Edge, source: Concept, target: Concept, batch: _Batch) -> None:
    """Admit one edge (see the module), or raise its refusal."""
    u, v = source.pk, target.pk
    pu, pv = state.at.get(u), state.at.get(v)
    if state.exact and pu is not None and pv is not None and pu < pv:
        row.in_order = True
    else:
        if state.exact and pu is not None and pv is not None:
            chain = _way_back(state, v, u, {u: source.name, v: target.name})
            if chain is not None:
                raise rules.cycle_refusal(state.relation, source, target, chain)
        _flush(batch)
        admission = admit_fact(relation=state.relation, source=source, target=target, defer=True)
        row.in_order = admission.in_order
        if state.exact and pu == pv:
            # Two concepts in one place: admit_fact repaired or gave up the order, so it
            # alone decides this relation's edges from now on.
            state.exact = False
        for concept, position in admission.moves.items():
            state.at[concept] = position
            batch.moves[(state.relation.pk, concept)] = position
    state.following[u].append(v)
    batch.rows.append(row)


def _way_back(
    state: _Relation, start: int, goal: int, names: dict[int, str]
) -> list[tuple[int, str]] | None:
    """The shortest chain from ``start`` to ``goal`` along the edges the batch admitted in
    this relation (in memory), (id, name) each, or None."""
    parents = {start: start}
    queue = deque([start])
    while queue and goal not in parents:
        node = queue.popleft()
        for nxt in state.following.get(node, ()):
            if nxt not in parents:
                parents[nxt] = node
                queue.append(nxt)
    if goal not in parents:
        return None
    path = [goal]
    while path[-1] != start:
        path.append(parents[path[-1]])
    path.reverse()
    missing = [c for c in path if c not in names]
    if missing:
        names.update(Concept.objects.filter(pk__in=missing).values_list("pk", "name"))
    return [(c, names[c]) for c in path]


def _place_new(state: _Relation, items: Sequence[Item], batch: _Batch) -> None:
    """Give the batch's concepts new to the relation their places, in memory and pending."""
    pairs = [(s.pk, t.pk) for row, s, t in items if row.relation_id == state.relation.pk]
    moves = order.new_places(pairs, state.at, state.lowest, state.highest)
    for concept, position in moves.items():
        state.at[concept] = position
        batch.moves[(state.relation.pk, concept)] = position


def _flush(batch: _Batch) -> None:
    """Write what the batch admitted so far: the positions, then the edges."""
    if batch.moves:
        order.write_many(batch.moves)
        batch.moves = {}
    if batch.rows:
        made = Edge.objects.bulk_create(batch.rows)
        if any(e.pk is None for e in made):
            raise IntegrityError("edge ids not returned")
        batch.rows = []


def _read(
    items: Sequence[Item], relations: dict[int, RelationType]
) -> tuple[dict[int, _Relation], dict[tuple[int, int, int], int]]:
    """One round trip: the positions of the ends, each relation's bounds and whether rows
    wait to be taken in, and the active edges already holding a fact of the batch."""
    rel_ids = sorted({row.relation_id for row, _, _ in items})
    ends = sorted({c.pk for _, s, t in items for c in (s, t)})
    if not rel_ids:
        return {}, {}
    # The edges of their inverses too, which may hold a fact of the batch as its twin.
    held_ids = sorted({*rel_ids, *(relations[r].inverse_id or r for r in rel_ids)})
    sql, params = _read_sql(rel_ids, ends, held_ids)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    known = {r: _Relation(relation=relations[r], exact=bool(relations[r].ordered)) for r in rel_ids}
    held: dict[tuple[int, int, int], int] = {}
    for tag, r, a, b, c in rows:
        if tag == "e":  # as stored: the batch asks each fact under its every form
            held[(a, r, b)] = c
            continue
        state = known[r]
        if tag == "p":
            state.at[a] = b
        else:
            state.lowest, state.highest = a, b
            state.exact = state.exact and not c
    return known, held


def _read_sql(rel_ids: list[int], ends: list[int], held_ids: list[int]) -> tuple[str, list[int]]:
    edge = Edge._meta.db_table
    place = ConceptOrder._meta.db_table
    r_in = ", ".join(["%s"] * len(rel_ids))
    h_in = ", ".join(["%s"] * len(held_ids))
    c_in = ", ".join(["%s"] * len(ends))
    bounds = " UNION ALL ".join(
        f"SELECT 'b', {r}, (SELECT min(position) FROM {place} WHERE relation_id = {r}),"
        f" (SELECT max(position) FROM {place} WHERE relation_id = {r}),"
        f" CASE WHEN EXISTS (SELECT 1 FROM {edge} WHERE relation_id = {r}"
        " AND status = 'active' AND NOT in_order) THEN 1 ELSE 0 END"
        for r in rel_ids  # ints from the rows' own columns
    )
    sql = (
        f"SELECT 'p', relation_id, concept_id, position, 0 FROM {place}"
        f" WHERE relation_id IN ({r_in}) AND concept_id IN ({c_in})"
        f" UNION ALL {bounds}"
        f" UNION ALL SELECT 'e', relation_id, source_id, target_id, id FROM {edge}"
        f" WHERE status = 'active' AND relation_id IN ({h_in})"
        f" AND source_id IN ({c_in}) AND target_id IN ({c_in})"
    )
    return sql, [*rel_ids, *ends, *held_ids, *ends, *ends]
