"""Prerequisites through wholes: a learner learns what a whole needs before a part of it.

"What should I learn before LoRA?" walks LoRA's own needs; LoRA is also part of
Parameter-efficient fine-tuning, which needs Transformer and builds on Fine-tuning. The
critic notes the wholes whose needs were not considered, the refiner adds them one part_of
hop per round (``stages``), and the answer cites, for each concept a whole needs, the
part_of hop(s) up to that whole followed by the chain to the concept. The wholes are the
context, not prerequisites: one is in the answer only when something considered needs it.

Everything here reads the frozen ``Retrieval`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .paths import facts_of, moves, passable, problems, route, table, tree, tree_routes
from .types import ConceptFact, Plan, Retrieval, Step, Walk

PART_OF: tuple[Walk, ...] = (Walk("part_of", "out"),)


def _key(facts: dict[int, ConceptFact], hops: dict[int, int], whole: int) -> tuple:
    fact = facts.get(whole)
    return (hops.get(whole, 0), fact.name if fact else "", whole)


def pending(retrieval: Retrieval, among: Sequence[int] = ()) -> list[int]:
    """The wholes whose needs were not considered yet (only those in ``among`` when it
    names any), nearest first, then by name, then id."""
    hops = dict(retrieval.wholes)
    done = set(retrieval.considered)
    left = [w for w in hops if w not in done]
    named = [w for w in left if w in set(among)]
    facts = facts_of(retrieval)
    return sorted(named or left, key=lambda w: _key(facts, hops, w))


def considered(retrieval: Retrieval) -> list[int]:
    """The wholes whose needs were added, nearest first, then by name, then id."""
    hops = dict(retrieval.wholes)
    facts = facts_of(retrieval)
    return sorted(retrieval.considered, key=lambda w: _key(facts, hops, w))


def _distances(
    retrieval: Retrieval, walks: Sequence[Walk], root: int, facts: dict[int, ConceptFact]
) -> dict[int, int]:
    """Breadth-first over the retrieval's edges from ``root`` along ``walks``, through
    concepts a chain may pass (the walk the refiner made from the whole)."""
    walked = table(walks)
    ahead: dict[int, list[int]] = {}
    for edge in retrieval.edges:
        for frm, to in moves(edge, walked):
            ahead.setdefault(frm, []).append(to)
    dist = {root: 0}
    frontier = [root]
    while frontier:
        nxt = []
        for here in frontier:
            if not passable(here, facts, (root,)):
                continue
            for to in ahead.get(here, ()):
                if to not in dist:
                    dist[to] = dist[here] + 1
                    nxt.append(to)
        frontier = sorted(nxt)
    return dist


def whole_routes(plan: Plan, retrieval: Retrieval) -> dict[int, tuple[Step, ...]]:
    """For each concept a considered whole needs (active, not the asked concept): the
    part_of hops from the concept up to the first whole (nearest, then name, then id) that
    needs it, then that whole's chain to it. Routes that fail the checks are left out."""
    start = plan.concepts[0].concept_id
    facts = facts_of(retrieval)
    up = tree(retrieval, PART_OF, {start: 0, **dict(retrieval.wholes)}, (start,))
    climb = replace(plan, walks=PART_OF)
    routes: dict[int, tuple[Step, ...]] = {}
    for whole in considered(retrieval):
        head = route(up, start, whole)
        if head is None or problems(climb, head, facts, start=start, goal=whole):
            continue
        dist = _distances(retrieval, plan.walks, whole, facts)
        tails, _ = tree_routes(retrieval, plan.walks, dist, whole, facts)
        for concept in sorted(tails):
            fact = facts.get(concept)
            if concept in routes or concept == start or not fact or not fact.active:
                continue
            routes[concept] = head + tails[concept]
    return routes


def listed(names: Sequence[str]) -> str:
    """Names in words: "A", "A and B", "A, B and C"."""
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def names_of(retrieval: Retrieval, wholes: Sequence[int]) -> str:
    facts = facts_of(retrieval)
    return listed([facts[w].name if w in facts else f"#{w}" for w in wholes])
