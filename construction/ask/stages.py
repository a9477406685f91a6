"""RETRIEVE and REFINE: breadth-first walks over the graph reader, one hop at a time.

A set question walks from its concept until nothing new is found (transitive families)
or for one hop. A pair question walks from both ends, one hop at a time from the side
with the smaller frontier (ties: the start), and stops at the first hop where the sides
meet at a concept a chain may pass through (active at the instant). Retired concepts are
reached but never walked through. ``refine`` takes one more hop per round from where the
critic says the chain stopped. Every value in and out is frozen; the working state of a
walk lives in ``_Walk`` only while a stage runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from .paths import moves, reversed_walks, table
from .protocols import GraphReader
from .types import PAIR_FAMILIES, ConceptFact, EdgeFact, Plan, Retrieval, Verdict, Walk


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
        retrieval, _ = reader.study_order(plan.concepts[0].concept_id, limit=limit)
        state.order = retrieval.order
    return state.frozen(pair=pair)


def refine(
    plan: Plan, retrieval: Retrieval, verdict: Verdict, reader: GraphReader, limit: int
) -> Retrieval:
    """One more hop of breadth-first expansion from where the chain stopped (for a pair
    question, from the side the critic names, else the smaller frontier)."""
    pair = plan.family in PAIR_FAMILIES
    state = _Walk.of(retrieval)
    if _blocked(state, pair):
        return retrieval
    side = _next_side(state, verdict.refine_from) if pair else "start"
    _hop(state, side, _side_walks(plan, side), reader, limit)
    return replace(state.frozen(pair=pair), order=retrieval.order)
