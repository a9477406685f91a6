"""CRITIQUE, offline: is the chain complete?

For a pair question: both ends reached by one chain, every step along a planned relation
in a planned direction, no step through a concept retired at the instant (a chain that
would pass through one is rejected, said in words, and the refiner routes around it).
For a set question: every member reached along the planned walks, retired concepts left
out, and the walk finished (nothing further to find, or one hop for one-hop families).
When the chain is not complete, the verdict names where to refine from, or nothing when
the search is over (the walk ran out of edges: the absence is the answer).
"""

from __future__ import annotations

from ..types import LLMUsage
from .paths import (
    blocked_meetings,
    chain_words,
    facts_of,
    members,
    pair_path,
    problems,
    tree_routes,
)
from .types import PAIR_FAMILIES, Plan, Retrieval, Step, Verdict
from .wholes import considered, names_of, pending, whole_routes


class OfflineCritic:
    """The checks every critic runs first; deterministic, no network."""

    name = "offline"

    def critique(
        self, plan: Plan, retrieval: Retrieval, *, names: dict[int, str], round: int
    ) -> tuple[Verdict, LLMUsage]:
        return offline_verdict(plan, retrieval, names=names, round=round), LLMUsage()


def offline_verdict(
    plan: Plan, retrieval: Retrieval, *, names: dict[int, str], round: int
) -> Verdict:
    if plan.family in PAIR_FAMILIES:
        return _pair_verdict(plan, retrieval, names, round)
    return _set_verdict(plan, retrieval, names, round)


def _name(names: dict[int, str], concept: int) -> str:
    return names.get(concept) or f"#{concept}"


def _pair_verdict(plan: Plan, retrieval: Retrieval, names: dict[int, str], round: int) -> Verdict:
    start, goal = plan.concepts[0].concept_id, plan.concepts[1].concept_id
    label = f"Round {round}"
    a, b = _name(names, start), _name(names, goal)
    reasons = [
        f"{label}: rejected a chain through '{n}': it is retired at this instant."
        for n in blocked_meetings(plan, retrieval)
    ]
    path = pair_path(plan, retrieval)
    if path is not None:
        wrong = problems(plan, path, facts_of(retrieval), start=start, goal=goal)
        if not wrong:
            reasons.append(_complete(label, path, names, a, b))
            return Verdict(True, tuple(reasons))
        reasons.extend(f"{label}: rejected: {w}." for w in wrong)
    return _open_pair(plan, retrieval, names, label, reasons, a, b)


def _complete(label: str, path: tuple[Step, ...], names: dict[int, str], a: str, b: str) -> str:
    """A complete chain in words (a verdict always says why it holds)."""
    if not path:
        return f"{label}: complete: {a} and {b} are one concept; no hop is needed."
    return (
        f"{label}: complete: both ends reached in {len(path)} hop(s): "
        f"{chain_words(path, names)}; every hop along the plan's relations, no retired "
        "concept on it."
    )


def _open_pair(
    plan: Plan,
    retrieval: Retrieval,
    names: dict[int, str],
    label: str,
    reasons: list[str],
    a: str,
    b: str,
) -> Verdict:
    if retrieval.truncated:
        reasons.append(f"{label}: the walk was cut at the concept limit; search stopped.")
        return Verdict(False, tuple(reasons))
    if retrieval.exhausted:
        reasons.append(
            f"{label}: no chain from {a} to {b}: the walk ran out of edges after "
            f"{retrieval.depth} hop(s); the search is over."
        )
        return Verdict(False, tuple(reasons))
    if not plan.transitive and retrieval.depth >= plan.hops:
        reasons.append(f"{label}: no direct edge from {a} to {b}; the search is over.")
        return Verdict(False, tuple(reasons))
    ends = retrieval.frontier + retrieval.goal_frontier
    shown = ", ".join(_name(names, c) for c in ends[:5]) + (", ..." if len(ends) > 5 else "")
    reasons.append(
        f"{label}: no chain from {a} to {b} within {retrieval.depth} hop(s); "
        f"refine one hop from the dead ends ({shown})."
    )
    return Verdict(False, tuple(reasons), refine_from=ends)


def _set_verdict(plan: Plan, retrieval: Retrieval, names: dict[int, str], round: int) -> Verdict:
    label = f"Round {round}"
    start = plan.concepts[0].concept_id
    facts = facts_of(retrieval)
    dist = dict(retrieval.from_start)
    reasons = [
        f"{label}: left out '{facts[c].name}': it is retired at this instant."
        for c in sorted(dist, key=lambda c: (facts[c].name, c) if c in facts else ("", c))
        if c in facts and not facts[c].active and c != start
    ]
    found = members(retrieval, plan)
    routes, rejected = tree_routes(retrieval, plan.walks, dist, start, facts)
    for concept in found:
        why = rejected.get(concept, [] if concept in routes else ["the chain is empty"])
        for wrong in why:
            reasons.append(f"{label}: rejected the route to '{_name(names, concept)}': {wrong}.")
    walked = ", ".join(f"{w.relation} ({w.direction})" for w in plan.walks)
    summary = (
        f"{label}: walked {walked} from {_name(names, start)}: {len(found)} concept(s) "
        f"within {retrieval.depth} hop(s)"
    )
    if retrieval.truncated:
        reasons.append(summary + "; cut at the concept limit.")
        return Verdict(False, tuple(reasons))
    if retrieval.exhausted or not plan.transitive and retrieval.depth >= plan.hops:
        return _done(plan, retrieval, names, summary, reasons)
    reasons.append(summary + "; more may lie further, refining.")
    return Verdict(False, tuple(reasons), refine_from=retrieval.frontier)


def _done(
    plan: Plan, retrieval: Retrieval, names: dict[int, str], summary: str, reasons: list[str]
) -> Verdict:
    """The walk is finished; for prerequisites, the wholes the concept is part of must
    have had their needs considered too (a whole's needs come before any part of it)."""
    if plan.family != "prerequisites":
        reasons.append(summary + "; nothing further to find.")
        return Verdict(True, tuple(reasons))
    start = _name(names, plan.concepts[0].concept_id)
    done = considered(retrieval)
    if done:
        own = set(members(retrieval, plan))
        added = [c for c in whole_routes(plan, retrieval) if c not in own]
        summary += (
            f"; considered what {start} is part of ({names_of(retrieval, done)}): "
            f"{len(added)} concept(s) more"
        )
    left = pending(retrieval)
    if left:
        reasons.append(
            f"{summary}; {start} is part of {names_of(retrieval, left)}, whose needs were "
            "not considered; refining."
        )
        return Verdict(False, tuple(reasons), refine_from=tuple(left))
    reasons.append(summary + "; nothing further to find.")
    return Verdict(True, tuple(reasons))
