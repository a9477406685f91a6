"""The values that flow between the ask loop's stages. All frozen: a stage never edits
its input.

plan (Plan) -> retrieve (Retrieval) -> critique (Verdict) -> refine (Retrieval) ... ->
answer (Answer). ``Answer.as_json`` is the stable shape of ``manage.py ask --json`` and
``GET /api/v1/ask``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Family = Literal[
    "prerequisites",  # what to learn before X (a learning path, foundations first)
    "dependents",  # what is affected if X is misunderstood (everything downstream of X)
    "parts",  # what is part of X
    "wholes",  # what X is part of
    "contrasts",  # what X contrasts with
    "uses",  # what X is used for / applied to
    "outgoing",  # what X <verb> (one relation of the graph's own, in its verb's words)
    "incoming",  # what <verb> X
    "connection",  # how X is connected to Y (a path)
    "yes_no",  # is X <relation> Y
    "members",  # the concepts of a type ("List the lock modes"): read by ``typed`` alone
]
FAMILIES: tuple[str, ...] = (
    "prerequisites",
    "dependents",
    "parts",
    "wholes",
    "contrasts",
    "uses",
    "outgoing",
    "incoming",
    "connection",
    "yes_no",
)
SET_FAMILIES: frozenset[str] = frozenset(
    {"prerequisites", "dependents", "parts", "wholes", "contrasts", "uses", "outgoing", "incoming"}
)
PAIR_FAMILIES: frozenset[str] = frozenset({"connection", "yes_no"})
# Families that ask about one relation, named in the plan's ``relation``.
RELATION_FAMILIES: frozenset[str] = frozenset({"yes_no", "outgoing", "incoming"})

Status = Literal["answered", "no_path", "not_understood"]
Direction = Literal["out", "in", "both"]


@dataclass(frozen=True)
class Walk:
    """One relation walked one way. ``out`` steps from an edge's source to its target,
    ``in`` from its target to its source, ``both`` either way. Symmetric relations are
    walked both ways whatever the direction says."""

    relation: str
    direction: Direction

    def as_json(self) -> dict:
        return {"relation": self.relation, "direction": self.direction}


@dataclass(frozen=True)
class Found:
    """A concept the planner found in the question: the words used for it, and the
    concept they resolved to (``match`` is exact, alias or fuzzy, as the resolver says)."""

    said: str
    concept_id: int
    name: str
    match: str
    score: float = 100.0

    def as_json(self) -> dict:
        return {
            "said": self.said,
            "concept": self.concept_id,
            "name": self.name,
            "match": self.match,
            "score": self.score,
        }


@dataclass(frozen=True)
class Plan:
    """How the question is read: its family, the concepts it names, what to walk.

    Set families name one concept (``concepts[0]``); connection and yes/no name two, in
    the question's order (start, goal). ``unknown`` holds names the question uses that
    the graph does not know; a plan with unknown names, or with no family, is answered
    ``not_understood`` without walking. ``relation`` is the relation a yes/no, outgoing
    or incoming question asks about. ``hops`` bounds the first walk; refinement may go
    further, one hop per round.
    """

    question: str
    family: Family | None
    concepts: tuple[Found, ...] = ()
    unknown: tuple[str, ...] = ()
    walks: tuple[Walk, ...] = ()
    hops: int = 1
    relation: str | None = None
    transitive: bool = True
    planner: str = "offline"
    note: str = ""
    # A question that names a concept type ("Which settings ..."): its key and label, and
    # the keys an answer may have (it and every type below it); empty: any type.
    type_key: str | None = None
    type_label: str = ""
    types: tuple[str, ...] = ()

    @property
    def understood(self) -> bool:
        return self.family is not None and not self.unknown and bool(self.concepts)

    def as_json(self) -> dict:
        return {
            "family": self.family,
            "concepts": [c.as_json() for c in self.concepts],
            "unknown": list(self.unknown),
            "walks": [w.as_json() for w in self.walks],
            "hops": self.hops,
            "relation": self.relation,
            "transitive": self.transitive,
            "planner": self.planner,
            "note": self.note,
            "type": self.type_key,
            "types": list(self.types),
        }


@dataclass(frozen=True)
class EdgeFact:
    """An edge as the graph held it at the instant asked about, with its evidence."""

    edge_id: int
    source_id: int
    target_id: int
    relation: str
    symmetric: bool = False
    quote: str = ""
    source_slug: str = ""
    revision: int | None = None  # the evidence revision's number within its source


@dataclass(frozen=True)
class ConceptFact:
    """A concept's name, and whether it was active (not merged or retired) at the instant."""

    concept_id: int
    name: str
    active: bool = True


@dataclass(frozen=True)
class Step:
    """One hop of an answer's path, read in the path's direction (``frm`` -> ``to``);
    ``source`` / ``target`` are the edge's own ends, so a hop walked against the edge
    says so."""

    edge: EdgeFact
    frm: int
    to: int

    def as_json(self, names: dict[int, str]) -> dict:
        return {
            "source": names.get(self.edge.source_id, ""),
            "relation": self.edge.relation,
            "target": names.get(self.edge.target_id, ""),
            "edge": self.edge.edge_id,
            "quote": self.edge.quote,
            "source_slug": self.edge.source_slug,
            "revision": self.edge.revision,
            "from": names.get(self.frm, ""),
            "to": names.get(self.to, ""),
        }


@dataclass(frozen=True)
class Retrieval:
    """What the walks found so far: every edge seen (ascending id), the concepts met with
    their distance from the start (and, for pair questions, from the goal), where the
    next expansion would start, and whether the walk ran out of edges (``exhausted``:
    nothing further can be found, so an absence is a checked answer)."""

    edges: tuple[EdgeFact, ...] = ()
    concepts: tuple[ConceptFact, ...] = ()
    from_start: tuple[tuple[int, int], ...] = ()  # (concept, distance), ascending concept
    from_goal: tuple[tuple[int, int], ...] = ()
    frontier: tuple[int, ...] = ()
    goal_frontier: tuple[int, ...] = ()
    depth: int = 0
    exhausted: bool = False
    truncated: bool = False
    order: tuple[int, ...] = ()  # a study order, for prerequisites (foundations first)
    # Prerequisites only: the wholes the asked concept is part of, up the part_of chain
    # ((whole, part_of hops), ascending whole), and those whose needs were walked and
    # merged into ``order`` (a learner learns what the whole needs before a part of it).
    wholes: tuple[tuple[int, int], ...] = ()
    considered: tuple[int, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """The critic's reading of a retrieval: complete or not, in words, and whether (and
    from where) to refine. ``refine_from`` empty with ``complete`` false means the search
    is over and the absence is the answer."""

    complete: bool
    reasons: tuple[str, ...] = ()
    refine_from: tuple[int, ...] = ()
    critic: str = "offline"


@dataclass(frozen=True)
class Answer:
    """The loop's result. ``concepts`` is the answer set (set questions) or the path's
    concepts; ``paths`` cite every hop; ``message`` is the answer in one sentence."""

    question: str
    status: Status
    message: str
    plan: Plan
    yes: bool | None = None
    concepts: tuple[ConceptFact, ...] = ()
    paths: tuple[tuple[Step, ...], ...] = ()
    critique: tuple[str, ...] = ()
    iterations: int = 0
    at: str | None = None  # the instant asked about (ISO 8601), None for now
    names: tuple[tuple[int, str], ...] = field(default=(), repr=False)

    def as_json(self) -> dict:
        names = dict(self.names)
        for c in self.concepts:
            names.setdefault(c.concept_id, c.name)
        # A set answer's routes share their first hops (each is its parent's route plus
        # one step, the same Step objects): each hop is written out once.
        written: dict[int, dict] = {}

        def hop(step: Step) -> dict:
            found = written.get(id(step))
            if found is None:
                found = written[id(step)] = step.as_json(names)
            return found

        return {
            "question": self.question,
            "status": self.status,
            "yes": self.yes,
            "message": self.message,
            "as_of": self.at,
            "answer": {
                "concepts": [c.name for c in self.concepts],
                "concept_ids": [c.concept_id for c in self.concepts],
                "paths": [[hop(s) for s in path] for path in self.paths],
            },
            "plan": self.plan.as_json(),
            "critique": list(self.critique),
            "iterations": self.iterations,
        }
