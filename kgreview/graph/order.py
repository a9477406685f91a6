"""The topological order of each acyclic relation, kept as its edges are written, so that
checking a new edge for a cycle costs a few index lookups instead of a walk of the graph.

Every concept with an edge in an acyclic relation has a position in it
(``ConceptOrder``), and every active edge of the relation runs from a lower position to
a higher one. So a new edge ``u -> v`` with ``u`` before ``v`` cannot close a cycle, and
needs nothing more. One that runs against the order can close a cycle only through the
concepts placed between its ends; those are searched, forwards from ``v`` and backwards
from ``u`` (Pearce and Kelly's dynamic topological sort): if the search from ``v``
reaches ``u``, the edge closes a cycle; otherwise the concepts found trade places
among themselves so that the new edge runs forwards too. Most new edges need no search;
on a curriculum-shaped graph the rest visit a few dozen concepts. A concept without a
position has no edge in the relation yet, so it can go anywhere: right before the target
(as a source) or right after the source (as a target), where its later edges among the
same neighbours stay short. So can a source that nothing leads to, or a target that
leads nowhere.

``place`` decides all this from one read (``precheck.edge_precheck``) and writes
nothing; the graph services write what it decides (``write``) under the relation's row
lock, which serialises the relation's writers. Each side of a search stops after
``REACH_LIMIT`` concepts: when one side ends within the limit, the concepts it found move
past the other end into the gap the positions leave there (``GAP``); when neither does,
the edge is refused in words, as too far to check (never the case on the benchmarks).

Rows written past the services (a benchmark's bulk copy, a fixture, a raw insert) carry
``Edge.in_order = False``. The next write of their relation finds them, rebuilds the
order (``rebuild_orders``, the same function the migration and the benchmarks call)
when the relation is small, and otherwise marks the relation unordered. So does data
that holds a cycle, where no order exists. An unordered relation is checked by the same
two bounded searches without positions: a cycle when they meet, none when either side
ends within the limit, refused in words when neither does; ``manage.py order_relations``
orders it again once its cycles are gone.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.apps import apps as django_apps
from django.db import connection, transaction

from .precheck import INLINE_REBUILD, REACH_LIMIT, Precheck

__all__ = [
    "GAP",
    "INLINE_REBUILD",
    "REACH_LIMIT",
    "Placement",
    "edges_out_of_order",
    "place",
    "new_places",
    "rebuild_orders",
    "set_unordered",
    "topological_positions",
    "write",
    "write_many",
]

#: The distance between neighbouring positions as the order is built: room for the
#: concepts a one-sided search moves between two of them.
GAP = 1 << 16


@dataclass(frozen=True)
class Placement:
    """What a new edge ``u -> v`` needs: concepts moved (id -> new position), whether the
    new row is in the order, and else why it cannot be written: a cycle (``cycle_among``:
    the concepts its chain lies among), too far to check (``unchecked``), or an order not
    to be trusted until rebuilt (``repair``: rows written past the services)."""

    moves: dict[int, int] = field(default_factory=dict)
    in_order: bool = True
    cycle_among: frozenset[int] | None = None
    unchecked: bool = False
    repair: bool = False


def place(check: Precheck, source_id: int, target_id: int, *, repaired: bool = False) -> Placement:
    """Where ``source_id -> target_id`` leaves the relation's order (see the module).
    ``repaired``: the order was just rebuilt (or given up), so it is not asked for again."""
    if not check.acyclic:
        return Placement()
    if not check.ordered:
        return _place_unordered(check, source_id, target_id, repaired=repaired)
    if check.stray or (check.source_at is not None and check.source_at == check.target_at):
        return Placement(in_order=False, repair=True)
    return _place_ordered(check, source_id, target_id)


def _place_unordered(check: Precheck, u: int, v: int, *, repaired: bool) -> Placement:
    """No order to lean on: the bounded searches alone decide (a small relation is first
    given its order back, if its edges allow one)."""
    if check.small and not repaired:
        return Placement(in_order=False, repair=True)
    ahead, behind = check.ahead, check.behind
    if u in ahead or v in behind or ahead.keys() & behind.keys():
        return Placement(in_order=False, cycle_among=frozenset(ahead) | frozenset(behind))
    if not ahead or check.ahead_closed or check.behind_closed:
        # Not searched (nothing leads into u, or v leads nowhere), or one side seen whole.
        return Placement(in_order=False)
    return Placement(in_order=False, unchecked=True)


def _place_ordered(check: Precheck, u: int, v: int) -> Placement:
    pu, pv = check.source_at, check.target_at
    if pu is None or pv is None:
        return Placement(moves=_new_places(check, u, v))
    if pu < pv:
        return Placement()
    if not check.source_has_in:
        return Placement(moves={u: _just_before(check, pv, check.before_target)})
    if not check.target_has_out:
        return Placement(moves={v: _just_after(check, pu, check.after_source)})
    ahead, behind = check.ahead, check.behind
    if u in ahead or v in behind:
        return Placement(in_order=False, cycle_among=frozenset(ahead) | frozenset(behind))
    moves: dict[int, int] | None
    if check.ahead_closed and check.behind_closed:
        moves = _trade_places(_placed(ahead), _placed(behind))
    elif check.ahead_closed:
        moves = _spread(_placed(ahead), after=pu, before=check.after_source)
    elif check.behind_closed:
        moves = _spread(_placed(behind), after=check.before_target, before=pv)
    else:
        moves = None
    if moves is None:
        return Placement(in_order=False, unchecked=True)
    return Placement(moves=moves)


def _new_places(check: Precheck, u: int, v: int) -> dict[int, int]:
    """Places for ends new to the relation (they have no edge in it): next to the other
    end, so that later edges among neighbours stay short; both new, at the end."""
    pu, pv = check.source_at, check.target_at
    if pv is not None:
        return {u: _just_before(check, pv, check.before_target)}
    if pu is not None:
        return {v: _just_after(check, pu, check.after_source)}
    highest = check.highest if check.highest is not None else 0
    return {u: highest + GAP, v: highest + 2 * GAP}


def _just_before(check: Precheck, position: int, previous: int | None) -> int:
    """A free position right before ``position`` (halfway to the one before it), or
    before every other when the gap is used up."""
    if previous is None:
        return position - GAP
    middle = (previous + position) // 2
    if previous < middle < position:
        return middle
    return (check.lowest if check.lowest is not None else 0) - GAP


def _just_after(check: Precheck, position: int, following: int | None) -> int:
    """A free position right after ``position``, or after every other."""
    if following is None:
        return position + GAP
    middle = (position + following) // 2
    if position < middle < following:
        return middle
    return (check.highest if check.highest is not None else 0) + GAP


def _placed(found: dict[int, int | None]) -> dict[int, int]:
    """The concepts of a search in an ordered relation, each with its position (all have
    one: the search follows positions)."""
    return {c: p for c, p in found.items() if p is not None}


def _trade_places(ahead: dict[int, int], behind: dict[int, int]) -> dict[int, int]:
    """Pearce and Kelly's reordering: the concepts leading to the source take the lowest of
    the positions both searches found, those the target leads to the rest, each side in
    its old order. Returns only the concepts that move."""
    pool = sorted([*ahead.values(), *behind.values()])
    sequence = sorted(behind, key=behind.__getitem__) + sorted(ahead, key=ahead.__getitem__)
    old = {**ahead, **behind}
    return {c: p for c, p in zip(sequence, pool, strict=True) if old[c] != p}


def _spread(
    found: dict[int, int], *, after: int | None, before: int | None
) -> dict[int, int] | None:
    """Move the concepts of one closed search, in their old order, into the positions
    strictly between ``after`` and ``before`` (None: that end of the order is open); None
    when the gap is too narrow for them."""
    need = len(found) + 1
    if after is None:
        after = (before if before is not None else 0) - need * GAP
    if before is None:
        before = after + need * GAP
    step = (before - after) // need
    if step < 1:
        return None
    sequence = sorted(found, key=found.__getitem__)
    return {c: after + step * (i + 1) for i, c in enumerate(sequence)}


def write(relation_id: int, moves: dict[int, int]) -> None:
    """Store the positions ``place`` decided (one statement; none when nothing moves)."""
    write_many({(relation_id, c): p for c, p in moves.items()})


def write_many(moves: dict[tuple[int, int], int]) -> None:
    """Store positions of any relations, (relation id, concept id) -> position, in one
    statement (none when nothing moves)."""
    if not moves:
        return
    ConceptOrder = django_apps.get_model("graph", "ConceptOrder")
    ConceptOrder.objects.bulk_create(
        [ConceptOrder(relation_id=r, concept_id=c, position=p) for (r, c), p in moves.items()],
        update_conflicts=True,
        unique_fields=["relation", "concept"],
        update_fields=["position"],
    )


def new_places(
    pairs: list[tuple[int, int]], placed: Iterable[int], lowest: int | None, highest: int | None
) -> dict[int, int]:
    """Places for the concepts of ``pairs`` (edges about to be admitted together, a bulk
    accept's) that have none in the relation yet (``placed``: those that have one), given
    its lowest and highest positions: those the pairs lead out of more often go first,
    the others last. Such a concept has no edge in the relation, so any place is right;
    placing them at once spares the edges one write each (and a new concept's edges then
    mostly run forwards, needing no search)."""
    ends = {c for pair in pairs for c in pair}
    new = sorted(ends - set(placed))
    if not new:
        return {}
    leads: dict[int, int] = defaultdict(int)
    for source, target in pairs:
        leads[source] += 1
        leads[target] -= 1
    lowest = lowest if lowest is not None else 0
    highest = highest if highest is not None else 0
    first = [c for c in new if leads[c] > 0]
    last = [c for c in new if leads[c] <= 0]
    moves = {c: lowest - GAP * (len(first) - i) for i, c in enumerate(first)}
    moves.update({c: highest + GAP * (i + 1) for i, c in enumerate(last)})
    return moves


# --- Building the order from the edges ------------------------------------------------


def topological_positions(pairs: Iterable[tuple[int, int]]) -> dict[int, int] | None:
    """Positions (multiples of ``GAP``, from ``GAP``) for the concepts of directed
    ``pairs`` so that every pair runs from a lower position to a higher one; None if the
    pairs hold a cycle.

    Kahn's algorithm. Of the concepts ready at each step it takes the lowest id first, or
    the highest when most pairs run from a higher id to a lower one (``builds_on`` reads
    backwards): ids follow creation, so the order then follows how the graph grew, and a
    new edge that does too needs no reordering.
    """
    following: dict[int, list[int]] = defaultdict(list)
    waiting: dict[int, int] = defaultdict(int)
    upwards = downwards = 0
    for source, target in pairs:
        following[source].append(target)
        waiting[target] += 1
        waiting.setdefault(source, 0)
        if source < target:
            upwards += 1
        else:
            downwards += 1
    sign = 1 if upwards >= downwards else -1
    ready = [sign * c for c, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    positions: dict[int, int] = {}
    while ready:
        concept = sign * heapq.heappop(ready)
        positions[concept] = (len(positions) + 1) * GAP
        for target in following.get(concept, ()):
            waiting[target] -= 1
            if waiting[target] == 0:
                heapq.heappush(ready, sign * target)
    return positions if len(positions) == len(waiting) else None


def rebuild_orders(relation_ids: Iterable[int] | None = None, *, apps=None) -> dict[str, bool]:
    """Build the order of each acyclic relation (or of those named) from its active edges,
    replacing what was there; returns, by relation key, whether it has one (False: its
    edges hold a cycle, and it is checked without an order until rebuilt).

    The one builder: the migration calls it (with its historical ``apps``), the
    benchmarks after seeding edges past the services, ``manage.py order_relations``, and
    a write that finds a small relation out of order. Each relation is rebuilt holding
    its row lock, so no edge of it is written meanwhile.
    """
    registry = apps or django_apps
    RelationType = registry.get_model("graph", "RelationType")
    out: dict[str, bool] = {}
    with transaction.atomic():
        relations = RelationType.objects.filter(acyclic=True)
        if relation_ids is not None:
            relations = relations.filter(pk__in=list(relation_ids))
        for relation in relations.select_for_update(no_key=True).order_by("pk"):
            out[relation.key] = _rebuild(registry, relation)
    return out


def _rebuild(registry, relation) -> bool:
    Edge = registry.get_model("graph", "Edge")
    ConceptOrder = registry.get_model("graph", "ConceptOrder")
    active = Edge.objects.filter(relation_id=relation.pk, status="active")
    positions = topological_positions(
        active.values_list("source_id", "target_id").iterator(chunk_size=20_000)
    )
    ordered = positions is not None
    if positions is not None:
        ConceptOrder.objects.filter(relation_id=relation.pk).delete()
        _insert_positions(ConceptOrder._meta.db_table, relation.pk, positions)
        active.filter(in_order=False).update(in_order=True)
    if relation.ordered != ordered:
        RelationType = registry.get_model("graph", "RelationType")
        RelationType.objects.filter(pk=relation.pk).update(ordered=ordered)
    return ordered


def _insert_positions(table: str, relation_id: int, positions: dict[int, int]) -> None:
    """Write a relation's positions: arrays unnested on PostgreSQL (a million rows in
    seconds, where model instances took minutes), plain rows elsewhere."""
    items = list(positions.items())
    with connection.cursor() as cursor:
        for start in range(0, len(items), 50_000):
            chunk = items[start : start + 50_000]
            if connection.vendor == "postgresql":
                cursor.execute(
                    f"INSERT INTO {table} (relation_id, concept_id, position) "
                    "SELECT %s, c, p FROM unnest(%s::bigint[], %s::bigint[]) AS t(c, p)",
                    [relation_id, [c for c, _ in chunk], [p for _, p in chunk]],
                )
            else:
                cursor.executemany(
                    f"INSERT INTO {table} (relation_id, concept_id, position) VALUES (%s, %s, %s)",
                    [(relation_id, c, p) for c, p in chunk],
                )


def edges_out_of_order(relation_id: int) -> list[int]:
    """The active edges of an ordered relation that do not run forwards in its order (an
    end without a position, or the source not before the target), in id order: none, as
    long as only the graph services write edges. Reads the whole relation: a check for
    tests and ``manage.py order_relations --check``, never for a decision."""
    Edge = django_apps.get_model("graph", "Edge")
    ConceptOrder = django_apps.get_model("graph", "ConceptOrder")
    at = dict(
        ConceptOrder.objects.filter(relation_id=relation_id).values_list("concept_id", "position")
    )
    out = []
    for pk, source, target in (
        Edge.objects.filter(relation_id=relation_id, status="active")
        .order_by("pk")
        .values_list("pk", "source_id", "target_id")
        .iterator(chunk_size=20_000)
    ):
        if source not in at or target not in at or at[source] >= at[target]:
            out.append(pk)
    return out


def set_unordered(relation_id: int) -> None:
    """Stop trusting a relation's order (rows written past the services, too many to
    take in now): it is checked without one until rebuilt."""
    RelationType = django_apps.get_model("graph", "RelationType")
    RelationType.objects.filter(pk=relation_id, ordered=True).update(ordered=False)
