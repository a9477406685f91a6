"""Chains over a retrieval: which steps an edge allows under a plan's walks, the
breadth-first tree of each side, the route to a concept, the shortest meeting of a pair
question's two sides, and the checks a cited path must pass.

Everything here reads the frozen ``Retrieval`` only; the same retrieval always gives the
same routes (edges are taken in ascending id, ties between meetings by hops, then name,
then id).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from .types import ConceptFact, EdgeFact, Plan, Retrieval, Step, Walk

FLIP = {"out": "in", "in": "out", "both": "both"}


def reversed_walks(walks: Sequence[Walk]) -> tuple[Walk, ...]:
    """The walks read backwards: what the goal side of a pair question expands along."""
    return tuple(Walk(w.relation, FLIP[w.direction]) for w in walks)  # type: ignore[arg-type]


def table(walks: Sequence[Walk]) -> dict[str, tuple[bool, bool]]:
    """For each walked relation, whether it is walked along its edges and against them."""
    out: dict[str, tuple[bool, bool]] = {}
    for walk in walks:
        along, against = out.get(walk.relation, (False, False))
        along = along or walk.direction in ("out", "both")
        against = against or walk.direction in ("in", "both")
        out[walk.relation] = (along, against)
    return out


def moves(edge: EdgeFact, walked: dict[str, tuple[bool, bool]]) -> list[tuple[int, int]]:
    """The (from, to) moves ``edge`` allows under a walk ``table``; a symmetric edge is
    walked both ways whatever the direction says."""
    flags = walked.get(edge.relation)
    if flags is None:
        return []
    along, against = (True, True) if edge.symmetric else flags
    out = [(edge.source_id, edge.target_id)] if along else []
    if against and (edge.target_id, edge.source_id) not in out:
        out.append((edge.target_id, edge.source_id))
    return out


def steps(edge: EdgeFact, walks: Sequence[Walk]) -> list[tuple[int, int]]:
    """The (from, to) moves ``edge`` allows under ``walks``."""
    return moves(edge, table(walks))


def facts_of(retrieval: Retrieval) -> dict[int, ConceptFact]:
    return {c.concept_id: c for c in retrieval.concepts}


def passable(concept_id: int, facts: dict[int, ConceptFact], ends: Iterable[int]) -> bool:
    """A concept a chain may pass through: active at the instant, or an end of the plan."""
    fact = facts.get(concept_id)
    return concept_id in ends or (fact is not None and fact.active)


def tree(
    retrieval: Retrieval, walks: Sequence[Walk], dist: dict[int, int], ends: Sequence[int]
) -> dict[int, Step]:
    """For each concept one side reached, the step that first reached it (ascending edge
    id), read in that side's walking direction (``frm`` nearer the side's origin)."""
    facts = facts_of(retrieval)
    walked = table(walks)
    parent: dict[int, Step] = {}
    for edge in retrieval.edges:
        for frm, to in moves(edge, walked):
            if to in parent or frm not in dist or to not in dist:
                continue
            if dist[frm] + 1 == dist[to] and passable(frm, facts, ends):
                parent[to] = Step(edge=edge, frm=frm, to=to)
    return parent


def route(parent: dict[int, Step], origin: int, concept: int) -> tuple[Step, ...] | None:
    """The steps from ``origin`` to ``concept`` in the side's tree, origin first."""
    out: list[Step] = []
    here = concept
    while here != origin:
        step = parent.get(here)
        if step is None or len(out) > len(parent):
            return None
        out.append(step)
        here = step.frm
    return tuple(reversed(out))


def meetings(plan: Plan, retrieval: Retrieval) -> list[tuple[int, int, str]]:
    """Concepts both sides of a pair question reached, best first: (hops, concept, name)."""
    facts = facts_of(retrieval)
    start = dict(retrieval.from_start)
    goal = dict(retrieval.from_goal)
    found = []
    for concept, d in goal.items():
        if concept in start:
            name = facts[concept].name if concept in facts else ""
            found.append((start[concept] + d, concept, name))
    found.sort(key=lambda m: (m[0], m[2], m[1]))
    return found


def _touching(retrieval: Retrieval) -> dict[int, list[EdgeFact]]:
    """The retrieval's edges by end concept, ascending id."""
    out: dict[int, list[EdgeFact]] = {}
    for edge in retrieval.edges:
        out.setdefault(edge.source_id, []).append(edge)
        if edge.target_id != edge.source_id:
            out.setdefault(edge.target_id, []).append(edge)
    return out


def _route_back(
    touching: dict[int, list[EdgeFact]],
    walked: dict[str, tuple[bool, bool]],
    dist: dict[int, int],
    passes: Callable[[int], bool],
    origin: int,
    concept: int,
) -> tuple[Step, ...] | None:
    """The route ``tree`` would give from ``origin`` to ``concept``, found by walking back
    from the concept (the lowest-id edge into each concept from one hop nearer)."""
    out: list[Step] = []
    here = concept
    while here != origin:
        want = dist[here] - 1
        step = next(
            (
                Step(edge=edge, frm=frm, to=to)
                for edge in touching.get(here, ())
                for frm, to in moves(edge, walked)
                if to == here and dist.get(frm) == want and passes(frm)
            ),
            None,
        )
        if step is None:
            return None
        out.append(step)
        here = step.frm
    return tuple(reversed(out))


def pair_path(plan: Plan, retrieval: Retrieval) -> tuple[Step, ...] | None:
    """The shortest chain from the plan's start to its goal through passable concepts, in
    the question's direction, or None."""
    start_id, goal_id = plan.concepts[0].concept_id, plan.concepts[1].concept_id
    ends = (start_id, goal_id)
    facts = facts_of(retrieval)
    candidates = [m for m in meetings(plan, retrieval) if passable(m[1], facts, ends)]
    if not candidates:
        return None
    touching = _touching(retrieval)
    forward, backward = table(plan.walks), table(reversed_walks(plan.walks))
    start_dist, goal_dist = dict(retrieval.from_start), dict(retrieval.from_goal)

    def passes(concept: int) -> bool:
        return passable(concept, facts, ends)

    for _, concept, _ in candidates:
        head = _route_back(touching, forward, start_dist, passes, start_id, concept)
        tail = _route_back(touching, backward, goal_dist, passes, goal_id, concept)
        if head is None or tail is None:
            continue
        back = tuple(Step(edge=s.edge, frm=s.to, to=s.frm) for s in reversed(tail))
        return head + back
    return None


def blocked_meetings(plan: Plan, retrieval: Retrieval) -> list[str]:
    """Names of concepts where the two sides met but a chain may not pass (retired)."""
    ends = tuple(c.concept_id for c in plan.concepts)
    facts = facts_of(retrieval)
    return [
        name or f"#{concept}"
        for _, concept, name in meetings(plan, retrieval)
        if not passable(concept, facts, ends)
    ]


def _off_plan(walked: dict[str, tuple[bool, bool]], step: Step, number: int) -> list[str]:
    """Whether the ``number``-th step goes along a planned relation in a planned direction."""
    if (step.frm, step.to) in moves(step.edge, walked):
        return []
    return [
        f"step {number} (edge {step.edge.edge_id}, {step.edge.relation}) "
        "is not along the planned relations and directions"
    ]


def _retired(step: Step, facts: dict[int, ConceptFact], ends: Sequence[int]) -> list[str]:
    """Whether the step leaves a concept a chain may not pass through (not an end)."""
    if passable(step.frm, facts, ends):
        return []
    name = facts[step.frm].name if step.frm in facts else f"#{step.frm}"
    return [f"the chain passes through '{name}', which is retired"]


def problems(
    plan: Plan, path: Sequence[Step], facts: dict[int, ConceptFact], *, start: int, goal: int
) -> list[str]:
    """What is wrong with a cited path, in words (empty: a sound chain from start to
    goal, every step along a planned walk, no step through a retired concept)."""
    if not path:
        return [] if start == goal else ["the chain is empty"]
    found: list[str] = []
    if path[0].frm != start or path[-1].to != goal:
        found.append("the chain does not join both ends")
    walked = table(plan.walks)
    for i, step in enumerate(path):
        found.extend(_off_plan(walked, step, i + 1))
        if i and path[i - 1].to != step.frm:
            found.append(f"step {i + 1} does not continue from step {i}")
        if i:
            found.extend(_retired(step, facts, (start, goal)))
    return found


def tree_routes(
    retrieval: Retrieval,
    walks: Sequence[Walk],
    dist: dict[int, int],
    root: int,
    facts: dict[int, ConceptFact],
) -> tuple[dict[int, tuple[Step, ...]], dict[int, list[str]]]:
    """The route from ``root`` to every concept its breadth-first tree reaches, and the
    concepts whose route fails the checks of ``problems``, with why.

    Each step of the tree is checked once and each route is its parent's plus one step,
    so a set of thousands of concepts costs one pass over the tree, not one walk per
    member. A route is sound exactly when ``problems`` finds nothing in it.
    """
    parent = tree(retrieval, walks, dist, (root,))
    walked = table(walks)
    routes: dict[int, tuple[Step, ...]] = {root: ()}
    rejected: dict[int, list[str]] = {}
    for concept in sorted(parent, key=lambda c: (dist[c], c)):  # parents come first
        step = parent[concept]
        before = routes.get(step.frm)
        if before is None:  # the route to the parent was rejected
            rejected[concept] = list(rejected.get(step.frm, ["the chain does not join both ends"]))
            continue
        wrong = _off_plan(walked, step, len(before) + 1)
        if before:
            wrong += _retired(step, facts, (root, concept))
        if wrong:
            rejected[concept] = wrong
        else:
            routes[concept] = (*before, step)
    del routes[root]
    return routes, rejected


def members(retrieval: Retrieval, plan: Plan) -> list[int]:
    """The concepts a set question's walk reached that may be answers (active, not the
    asked concept)."""
    facts = facts_of(retrieval)
    start = plan.concepts[0].concept_id
    return [
        c
        for c, d in retrieval.from_start
        if c != start and d > 0 and c in facts and facts[c].active
    ]


def hop_words(step: Step) -> str:
    """A hop's arrow as the edge reads: "-[r]->" along it, "<-[r]-" against it, "-[r]-"
    for a symmetric relation."""
    relation = step.edge.relation
    if step.edge.symmetric:
        return f"-[{relation}]-"
    return f"-[{relation}]->" if step.frm == step.edge.source_id else f"<-[{relation}]-"


def chain_words(path: Sequence[Step], names: dict[int, str]) -> str:
    """A chain in words: "A -[builds_on]-> B <-[prerequisite]- C"."""
    parts = [names.get(path[0].frm, "") or f"#{path[0].frm}"] if path else []
    for step in path:
        parts.append(f"{hop_words(step)} {names.get(step.to, '') or f'#{step.to}'}")
    return " ".join(parts)
