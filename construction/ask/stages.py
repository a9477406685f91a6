"""RETRIEVE and REFINE: breadth-first walks over the graph reader, one hop at a time.

A set question walks from its concept until nothing new is found (transitive families)
or for one hop. A pair question walks from both ends, one hop at a time from the side
with the smaller frontier (ties: the start), and stops at the first hop where the sides
meet at a concept a chain may pass through (active at the instant). Retired concepts are
reached but never walked through. ``refine`` takes one more hop per round from where the
critic says the chain stopped. For prerequisites, once the concept's own needs are
found, the wholes it is part of are read one part_of hop at a time and ``refine`` adds
what they need (``wholes``). Every value in and out is frozen; the working state of a
walk lives in ``_Walk`` only while a stage runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from .paths import moves, reversed_walks, table
from .protocols import GraphReader
from .types import PAIR_FAMILIES, ConceptFact, EdgeFact, Plan, Retrieval, Verdict, Walk
from .wholes import PART_OF, pending


@dataclass
class _Walk:
    """The mutable state of one stage's walk, made from and frozen back into a Retrieval."""

    edges: dict[int, EdgeFact] = field(default_factory=dict)
    facts: dict[int, ConceptFact] = field(default_factory=dict)
    dist: dict[str, dict[int, int]] = field(default_factory=dict)
    frontier: dict[str, list[int]] = field(default_factory=dict)
    depth: int = 0
    truncated: bool = False
    order: tuple[int, ...] = ()
    wholes: dict[int, int] = field(default_factory=dict)  # whole -> part_of hops
    considered: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, retrieval: Retrieval) -> _Walk:
        return cls(
            edges={e.edge_id: e for e in retrieval.edges},
            facts={c.concept_id: c for c in retrieval.concepts},
            dist={"start": dict(retrieval.from_start), "goal": dict(retrieval.from_goal)},
            frontier={"start": list(retrieval.frontier), "goal": list(retrieval.goal_frontier)},
            depth=retrieval.depth,
            truncated=retrieval.truncated,
            order=retrieval.order,
            wholes=dict(retrieval.wholes),
            considered=list(retrieval.considered),
        )

    def frozen(self, *, pair: bool) -> Retrieval:
        start, goal = self.frontier["start"], self.frontier["goal"]
        exhausted = not self.truncated and (not start or (pair and not goal))
        return Retrieval(
            edges=tuple(self.edges[k] for k in sorted(self.edges)),
            concepts=tuple(self.facts[k] for k in sorted(self.facts)),
            from_start=tuple(sorted(self.dist["start"].items())),
            from_goal=tuple(sorted(self.dist["goal"].items())),
            frontier=tuple(start),
            goal_frontier=tuple(goal),
            depth=self.depth,
            exhausted=exhausted,
            truncated=self.truncated,
            order=self.order,
            wholes=tuple(sorted(self.wholes.items())),
            considered=tuple(self.considered),
        )

    def seen(self) -> int:
        return len(set(self.dist["start"]) | set(self.dist["goal"]))


def _hop(state: _Walk, side: str, walks: Sequence[Walk], reader: GraphReader, limit: int) -> None:
    """Expand one side's whole frontier by one hop."""
    frontier = state.frontier[side]
    if not frontier:
        return
    dist = state.dist[side]
    here = set(frontier)
    edges, more = reader.expand(frontier, walks=walks, limit=limit)
    new: list[int] = []
    walked = table(walks)
    for edge in edges:
        state.edges.setdefault(edge.edge_id, edge)
        for frm, to in moves(edge, walked):
            if frm in here and to not in dist:
                dist[to] = dist[frm] + 1
                new.append(to)
    unseen = [c for c in new if c not in state.facts]
    if unseen:
        state.facts.update(reader.concepts(unseen))
    state.frontier[side] = sorted(c for c in new if c in state.facts and state.facts[c].active)
    state.depth += 1
    if more or state.seen() >= limit:
        state.truncated = True


def _side_walks(plan: Plan, side: str) -> tuple[Walk, ...]:
    return plan.walks if side == "start" else reversed_walks(plan.walks)


def _next_side(state: _Walk, allowed: Sequence[int] = ()) -> str:
    """The side to expand: the smaller non-empty frontier (ties: the start); with
    ``allowed`` (a critic's refine_from) only a side whose frontier it names."""
    sides = [s for s in ("start", "goal") if state.frontier[s]]
    if allowed:
        wanted = set(allowed)
        named = [s for s in sides if wanted & set(state.frontier[s])]
        sides = named or sides
    if not sides:
        return "start"
    return min(sides, key=lambda s: (len(state.frontier[s]), s != "start"))


def _met(plan: Plan, state: _Walk) -> bool:
    """Whether the two sides meet at a concept a chain may pass through (every concept a
    side reached was reached through passable ones, so a route exists)."""
    start, goal = state.dist["start"], state.dist["goal"]
    ends = {c.concept_id for c in plan.concepts}
    small, large = (start, goal) if len(start) <= len(goal) else (goal, start)
    return any(
        c in large and (c in ends or (c in state.facts and state.facts[c].active)) for c in small
    )


def _blocked(state: _Walk, pair: bool) -> bool:
    if state.truncated:
        return True
    if pair:
        return not state.frontier["start"] or not state.frontier["goal"]
    return not state.frontier["start"]


def _start_state(plan: Plan, reader: GraphReader) -> _Walk:
    ids = [c.concept_id for c in plan.concepts]
    facts = reader.concepts(ids)
    for found in plan.concepts:  # the named ends are known to the index, so they exist
        facts.setdefault(found.concept_id, ConceptFact(found.concept_id, found.name, True))
    state = _Walk(facts=dict(facts))
    state.dist = {"start": {ids[0]: 0}, "goal": {ids[1]: 0} if len(ids) > 1 else {}}
    state.frontier = {"start": [ids[0]], "goal": [ids[1]] if len(ids) > 1 else []}
    return state


def retrieve(plan: Plan, reader: GraphReader, limit: int) -> Retrieval:
    """The first walk of a plan, within its hop bound (see the module's words)."""
    pair = plan.family in PAIR_FAMILIES
    state = _start_state(plan, reader)
    if pair and _met(plan, state):  # start and goal are one concept
        return state.frozen(pair=True)
    while state.depth < plan.hops and not _blocked(state, pair):
        side = _next_side(state) if pair else "start"
        _hop(state, side, _side_walks(plan, side), reader, limit)
        if pair and _met(plan, state):
            break
    if plan.family == "prerequisites":
        start = plan.concepts[0].concept_id
        retrieval, _ = reader.study_order(start, limit=limit)
        state.order = retrieval.order
        if _own_walk_done(state):
            _climb(plan, state, [start], 1, reader, limit)
    return state.frozen(pair=pair)


def refine(
    plan: Plan, retrieval: Retrieval, verdict: Verdict, reader: GraphReader, limit: int
) -> Retrieval:
    """One more hop of breadth-first expansion from where the chain stopped (for a pair
    question, from the side the critic names, else the smaller frontier)."""
    pair = plan.family in PAIR_FAMILIES
    state = _Walk.of(retrieval)
    if plan.family == "prerequisites" and _own_walk_done(state):
        wanted = pending(retrieval, verdict.refine_from)
        if wanted:
            _consider(plan, state, wanted, reader, limit)
        return state.frozen(pair=False)
    if _blocked(state, pair):
        return retrieval
    side = _next_side(state, verdict.refine_from) if pair else "start"
    _hop(state, side, _side_walks(plan, side), reader, limit)
    if plan.family == "prerequisites" and _own_walk_done(state):
        _climb(plan, state, [plan.concepts[0].concept_id], 1, reader, limit)
    return replace(state.frozen(pair=pair), order=retrieval.order)


# --- Prerequisites through wholes ------------------------------------------------------


def _own_walk_done(state: _Walk) -> bool:
    """The concept's own needs are all found (the walk ran out, not cut at the limit)."""
    return not state.frontier["start"] and not state.truncated


def _climb(
    plan: Plan, state: _Walk, origins: Sequence[int], hops: int, reader: GraphReader, limit: int
) -> None:
    """One hop up the part_of chain from ``origins``: the wholes they are part of (active
    at the instant), ``hops`` from the concept. A whole already known, the concept, or a
    concept already needed (its own needs are in the answer already) is not climbed to."""
    if not origins or "part_of" not in {spec.key for spec in reader.relations()}:
        return
    here = set(origins)
    edges, more = reader.expand(sorted(here), walks=PART_OF, limit=limit)
    needs = table(plan.walks)
    known = set(state.wholes) | set(state.dist["start"])
    known |= {to for e in state.edges.values() for _, to in moves(e, needs)}
    reached: list[tuple[EdgeFact, int]] = []
    walked = table(PART_OF)
    for edge in edges:
        reached += [(edge, t) for f, t in moves(edge, walked) if f in here and t not in known]
    unseen = sorted({to for _, to in reached if to not in state.facts})
    if unseen:
        state.facts.update(reader.concepts(unseen))
    for edge, to in reached:
        if to in state.facts and state.facts[to].active:
            state.edges.setdefault(edge.edge_id, edge)
            state.wholes.setdefault(to, hops)
    state.truncated = state.truncated or more


def _consider(
    plan: Plan, state: _Walk, wanted: Sequence[int], reader: GraphReader, limit: int
) -> None:
    """Add what ``wanted`` (wholes) need: each whole's study order merged after the order
    so far (the concept's own needs first; every order is closed under needs, so the
    merge stays foundations first), their needs walked so every one has a cited chain,
    then one hop further up the part_of chain."""
    order = list(state.order)
    for whole in wanted:
        found, _ = reader.study_order(whole, limit=limit)
        order += found.order
    state.order = tuple(dict.fromkeys(order))
    _walk_needs(plan, state, wanted, reader, limit)
    state.considered += list(wanted)
    hops = max(state.wholes[w] for w in wanted) + 1
    if hops <= plan.hops:
        _climb(plan, state, wanted, hops, reader, limit)


def _walk_needs(
    plan: Plan, state: _Walk, roots: Sequence[int], reader: GraphReader, limit: int
) -> None:
    """Breadth-first along the plan's walks from the wholes until nothing new (or the hop
    bound, or the concept limit): the edges the answer's chains cite."""
    seen = set(roots)
    frontier = sorted(seen)
    walked = table(plan.walks)
    for _ in range(plan.hops):
        if not frontier:
            return
        edges, more = reader.expand(frontier, walks=plan.walks, limit=limit)
        here, new = set(frontier), []
        for edge in edges:
            state.edges.setdefault(edge.edge_id, edge)
            new += [to for frm, to in moves(edge, walked) if frm in here and to not in seen]
            seen.update(new)
        unseen = sorted({c for c in new if c not in state.facts})
        if unseen:
            state.facts.update(reader.concepts(unseen))
        frontier = sorted({c for c in new if c in state.facts and state.facts[c].active})
        if more or len(seen) >= limit:
            state.truncated = True
            return
