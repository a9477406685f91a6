"""The Ask page's suggestions: questions built from the graph itself.

Each suggestion names the graph's own well-connected concepts (the ends of the most
edges now) and asks about one of its own active relations, in the words the offline
planner reads: the phrasebook's idioms where the relation is one of the curriculum's
("What should I learn before X?"), else the relation's verb (``construction.ask.verbs``:
"What does X require?", "What is a kind of X?"), plus one yes / no question on an edge
and one connection between two neighbours of the best-connected concept.

A question is kept only when the offline planner reads it back as built: the same
concepts, and a walk along the relation and the direction of the edges it was built
from. Each suggestion therefore walks at least one edge the graph holds now, so it is
answered, never "I do not know". An empty graph gets none, and the page says why.

Reads only: two grouped queries over the active edges (as the explorer's starting
points), one bounded query for the hubs' edges, one for names. At 200,000 edges on
PostgreSQL the grouped queries take about half a second, so each process keeps the last
suggestions for the graph as it is (``graph_version``: the newest edge, decision and
curation log row) and builds them again only when one of those moves, or after
``KEEP_SECONDS``.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Count, Max, Q

from construction.ask.loop import walkable
from construction.ask.planner_offline import example_questions, plan_question
from construction.ask.types import Walk
from construction.ask.verbs import phrasing_for
from construction.types import RelationSpec
from kgreview.core.models import AuditEntry
from kgreview.graph.models import Concept, Edge
from kgreview.graph.name_index import QUESTION_INDEX
from kgreview.graph.selectors import edges_active, relation_table
from kgreview.review.models import Decision

LIMIT = 8
KEEP_SECONDS = 300.0
HUBS = 30  # the best-connected concepts on each side whose edges the questions use
HUB_EDGES = 3000  # at most this many of their edges are read

# The phrasebook's idioms for the curriculum's relations: (relation, side the concept
# stands on, question). "source": the concept is the source of the relation's edges.
IDIOMS: dict[str, tuple[tuple[str, str], ...]] = {
    "prerequisite": (
        ("target", "What should I learn before {x}?"),
        ("source", "Which topics are affected if my understanding of {x} is wrong?"),
    ),
    "builds_on": (("target", "What builds on {x}?"), ("source", "What does {x} build on?")),
    "part_of": (("target", "What is part of {x}?"), ("source", "What is {x} part of?")),
    "contrasts_with": (("either", "What does {x} contrast with?"),),
    "applies_to": (("source", "What is {x} used for?"),),
}
DIRECTION = {"source": "out", "target": "in", "either": "both"}


@dataclass(frozen=True)
class Suggestions:
    """Questions to start from, and, when there are none, why in words."""

    questions: tuple[str, ...] = ()
    empty: str = ""


@dataclass(frozen=True)
class _Candidate:
    question: str
    concepts: tuple[int, ...]
    relation: str | None  # None: a connection, any relation
    direction: str = "out"


@dataclass
class _Hubs:
    """The hubs' edges now: by relation, who stands on which side, how often."""

    sources: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    targets: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    edges: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    neighbours: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    degree: Counter = field(default_factory=Counter)


def _hubs(keys: dict[int, str]) -> _Hubs:
    active = edges_active().filter(relation_id__in=keys)
    ids: set[int] = set()
    for column in ("source_id", "target_id"):
        rows = active.values(column).annotate(n=Count("id")).order_by("-n", column)[:HUBS]
        ids.update(row[column] for row in rows)
    hubs = _Hubs()
    rows = (
        active.filter(Q(source_id__in=ids) | Q(target_id__in=ids))
        .order_by("id")
        .values_list("source_id", "relation_id", "target_id")[:HUB_EDGES]
    )
    for source, relation_id, target in rows:
        key = keys[relation_id]
        hubs.sources[key][source] += 1
        hubs.targets[key][target] += 1
        hubs.edges[key].append((source, target))
        hubs.neighbours[source].append(target)
        hubs.neighbours[target].append(source)
        hubs.degree.update((source, target))
    return hubs


def _best(counter: Counter, n: int = 3) -> list[int]:
    return [c for c, _ in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def _set_candidates(spec: RelationSpec, hubs: _Hubs, names: dict[int, str]) -> list[_Candidate]:
    """Questions about one concept: what it stands in ``spec`` to, what stands in it."""
    key = spec.key
    either = hubs.sources[key] + hubs.targets[key]
    sides = {"source": hubs.sources[key], "target": hubs.targets[key], "either": either}
    shapes: list[tuple[str, str]] = list(IDIOMS.get(key, ()))
    phrasing = phrasing_for(spec)
    if not shapes and phrasing is not None:
        if spec.symmetric:
            shapes = [("either", phrasing.outgoing("{x}"))]
        else:
            shapes = [("source", phrasing.outgoing("{x}")), ("target", phrasing.incoming("{x}"))]
    # The side whose best concept holds the most edges first: "What is a kind of
    # index?" (two kinds) before "What is a B-tree index a kind of?" (one).
    shapes.sort(key=lambda shape: -max(sides[shape[0]].values(), default=0))
    out = []
    for side, shape in shapes:
        for concept in _best(sides[side]):
            out.append(_Candidate(shape.format(x=names[concept]), (concept,), key, DIRECTION[side]))
    return out


def _yes_no(specs: Sequence[RelationSpec], hubs: _Hubs, names: dict[int, str]) -> list[_Candidate]:
    out = []
    for spec in specs:
        phrasing = phrasing_for(spec)
        if phrasing is None:
            continue
        for a, b in hubs.edges[spec.key][:3]:
            out.append(_Candidate(phrasing.yes_no(names[a], names[b]), (a, b), spec.key))
    return out


def _connection(hubs: _Hubs, names: dict[int, str]) -> list[_Candidate]:
    """Two neighbours of the best-connected concepts: a chain of two hops through it."""
    out = []
    for hub in _best(hubs.degree):
        around = list(dict.fromkeys(n for n in hubs.neighbours[hub] if n != hub))
        if len(around) >= 2:
            a, b = around[0], around[1]
        elif around:
            a, b = hub, around[0]
        else:
            continue
        out.append(_Candidate(f"How is {names[a]} connected to {names[b]}?", (a, b), None))
    return out


def _reads_back(candidate: _Candidate, vocabulary: Sequence[RelationSpec], index) -> bool:
    """Whether the offline planner reads the question as it was built."""
    plan = plan_question(candidate.question, index=index, vocabulary=vocabulary)
    if not walkable(plan) or tuple(c.concept_id for c in plan.concepts) != candidate.concepts:
        return False
    if candidate.relation is None:
        return plan.family == "connection"
    wanted = {Walk(candidate.relation, candidate.direction), Walk(candidate.relation, "both")}
    return bool(wanted & set(plan.walks))


def _first_per_group(groups: list[list[_Candidate]], vocabulary, index) -> list[str]:
    """The first candidate of each group that reads back, in group order."""
    chosen: list[str] = []
    for group in groups:
        for candidate in group:
            if candidate.question not in chosen and _reads_back(candidate, vocabulary, index):
                chosen.append(candidate.question)
                break
    return chosen


def question_shapes() -> tuple[str, ...]:
    """The question shapes the graph's active vocabulary answers ("What does X
    require?"), for the page's help."""
    return tuple(example_questions([row.spec for row in relation_table() if row.active]))


def graph_version() -> tuple:
    """What changes whenever the graph does through its services: the newest edge row,
    decision and curation log row (three index reads), and the database itself."""
    newest = [model.objects.aggregate(n=Max("id"))["n"] for model in (Edge, Decision, AuditEntry)]
    return (connection.settings_dict["NAME"], *newest)


_KEPT: dict[tuple, tuple[float, Suggestions]] = {}
_LOCK = threading.Lock()


def forget() -> None:
    """Drop the kept suggestions (for a database replaced under the process: tests)."""
    with _LOCK:
        _KEPT.clear()


def ask_suggestions(*, limit: int = LIMIT) -> Suggestions:
    """Up to ``limit`` questions the graph answers now, built from its own concepts and
    active relations; none for a graph without active edges, with the reason. Kept per
    process while ``graph_version`` stands (at most ``KEEP_SECONDS``)."""
    key = (graph_version(), limit)
    now = time.monotonic()
    with _LOCK:
        kept = _KEPT.get(key)
    if kept is not None and now - kept[0] < KEEP_SECONDS:
        return kept[1]
    found = _build(limit)
    with _LOCK:
        _KEPT.clear()  # only the newest version is worth keeping
        _KEPT[key] = (now, found)
    return found


def _build(limit: int) -> Suggestions:
    rows = [row for row in relation_table() if row.active]
    vocabulary = [row.spec for row in rows]
    keys = {row.id: row.spec.key for row in rows}
    hubs = _hubs(keys)
    if not hubs.degree:
        if not Concept.objects.filter(status=Concept.Status.ACTIVE).exists():
            why = (
                "There is nothing to ask yet: this graph holds no concepts. Import documents "
                "on the Sources page and review what the agents propose; questions appear "
                "here once edges are accepted."
            )
        else:
            why = (
                "There is nothing to ask yet: no edge between concepts has been accepted. "
                "Questions appear here once reviewers accept the agents' edge proposals."
            )
        return Suggestions(empty=why)
    names = dict(Concept.objects.filter(pk__in=hubs.degree).values_list("pk", "name"))
    by_size = sorted(vocabulary, key=lambda s: (s.key == "related", -len(hubs.edges[s.key]), s.key))
    used = [s for s in by_size if hubs.edges[s.key]]
    first: list[list[_Candidate]] = []
    second: list[list[_Candidate]] = []
    for spec in used:
        candidates = _set_candidates(spec, hubs, names)
        for n, side in enumerate(dict.fromkeys(c.direction for c in candidates)):
            group = [c for c in candidates if c.direction == side]
            (first if n == 0 and spec.key != "related" else second).append(group)
    pairs = [_connection(hubs, names), _yes_no(used, hubs, names)]
    # One question per relation (a connection and a yes / no after the first four, so
    # each kind shows), then the relations' other sides.
    index = QUESTION_INDEX.get()
    questions = _first_per_group(first[:4] + pairs + first[4:] + second, vocabulary, index)
    return Suggestions(questions=tuple(questions[:limit]))
