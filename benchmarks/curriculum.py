"""The graph every graph-reading benchmark seeds: shaped like a curriculum.

Concepts stand in a hidden study order (their id order). A ``prerequisite``,
``builds_on`` or ``part_of`` edge joins a concept to one a little earlier in that order
(the distance is geometric, 40 on average), so chains run deep and closures overlap the
way a real syllabus's do: half of all concepts have more than a thousand ancestors at
the base size. ``applies_to``, ``related`` and ``contrasts_with`` join concepts anywhere.
Half the edges were recorded a week ago and a fifth of those (a tenth of all) was
retired since, so a read "as of" an instant walks a table with real history in it.

Data measured against this shape is picked at random (``rng.choice`` over every concept),
never chosen for a convenient size: a benchmark that needs a particular size says so and
reports the sizes it met.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from benchmarks.synthetic import concept_names
from kgreview.review.kinds.add_edge import AddEdgeKind

from .common import analyze, insert_rows, seed_concepts
from .seeds import seeded

#: How often each relation is drawn (the curriculum's mix).
MIX = [
    ("prerequisite", 0.40),
    ("builds_on", 0.15),
    ("part_of", 0.10),
    ("applies_to", 0.15),
    ("related", 0.12),
    ("contrasts_with", 0.08),
]
#: Relations that follow the study order (and are acyclic in the starting vocabulary).
LOCAL = frozenset({"prerequisite", "builds_on", "part_of"})
MEAN_DISTANCE = 40

#: The base size (``--scale 1``); ``--scale 5`` and ``10`` multiply both.
BASE_CONCEPTS = 50_000
BASE_EDGES = 200_000
#: The graph's own random seed: every benchmark that reads the plain curriculum at one
#: scale reads the same graph (so a kept seed serves them all); picks use their own.
GRAPH_SEED = 1
#: The same for the open proposals seeded on it.
PROPOSAL_SEED = 2


def local_pair(n: int, rng: random.Random) -> tuple[int, int]:
    """Positions ``(a, b)`` with ``a`` a little before ``b`` in the study order."""
    b = rng.randrange(1, n)
    a = max(0, b - 1 - int(rng.expovariate(1 / MEAN_DISTANCE)))
    return a, b


def ordered(key: str, a: int, b: int) -> tuple[int, int]:
    """The (source, target) positions of a ``key`` edge between an earlier ``a`` and a later
    ``b``: "A is a prerequisite for B", "A is part of B", but "B builds on A"."""
    return (b, a) if key == "builds_on" else (a, b)


@dataclass
class Curriculum:
    """What a benchmark needs to know of the seeded graph."""

    ids: list[int]  # concept ids in the hidden study order
    names: list[str]  # their names, in the same order
    relations: dict  # key -> RelationType
    #: Active prerequisite predecessors of each concept id ("what must come before").
    preds: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    edges: int = 0
    #: Every (source id, relation id, target id) seeded, retired ones included.
    facts: set[tuple[int, int, int]] = field(default_factory=set)

    def position(self) -> dict[int, int]:
        return {cid: i for i, cid in enumerate(self.ids)}


Evidence = Callable[[int], dict]


def seed_curriculum(
    *,
    rng: random.Random | None = None,
    concepts: int = BASE_CONCEPTS,
    edges: int = BASE_EDGES,
    names: list[str] | None = None,
    history: bool = True,
    evidence: Evidence | None = None,
    order: bool = True,
) -> Curriculum:
    """Seed ``concepts`` concepts and ``edges`` edges shaped like a curriculum, then
    ``ANALYZE``. ``evidence(i)``, when given, returns the evidence fields of the i-th edge
    (``evidence_revision_id``, ``evidence_start``, ``evidence_end``, ``evidence_quote``).

    The edges are copied in past the graph services, so the acyclic relations'
    topological order (``kgreview.graph.order``) is then built from them by
    ``rebuild_orders``, as the migration builds it for existing edges; the rows are
    written as in that order (``Edge.in_order``), which the rebuild makes true. A
    benchmark that only reads may pass ``order=False`` to skip that (seconds at 10x): the
    rows are then marked as written past the services, and a write would find them.
    """
    rng = rng or random.Random(GRAPH_SEED)
    names = names or concept_names(concepts)
    if evidence is not None:  # a function: not something a kept seed can be matched on
        return _seed_curriculum(rng, names, edges, history, evidence, order)
    params = (len(names), hashlib.sha256("\n".join(names).encode()).hexdigest(), edges)
    return seeded(
        "curriculum",
        (*params, history, order),
        rng,
        lambda: _seed_curriculum(rng, names, edges, history, None, order),
    )


def _seed_curriculum(
    rng: random.Random,
    names: list[str],
    edges: int,
    history: bool,
    evidence: Evidence | None,
    order: bool,
) -> Curriculum:
    from kgreview.graph.models import RelationType
    from kgreview.graph.order import rebuild_orders

    ids = seed_concepts(names)
    relations = {r.key: r for r in RelationType.objects.all()}
    graph = Curriculum(ids=ids, names=names, relations=relations)
    with transaction.atomic():
        rows = _edges(graph, edges, rng, history, evidence, in_order=order)
        graph.edges = insert_rows(_edge_model(), rows)
        if order:
            rebuild_orders()
    analyze()
    return graph


def _edge_model():
    from kgreview.graph.models import Edge

    return Edge


def _edges(graph: Curriculum, count: int, rng, history: bool, evidence, *, in_order) -> Iterator:
    Edge = _edge_model()
    now = timezone.now()
    week_ago = now - timedelta(days=7)
    keys = [k for k, _ in MIX]
    weights = [w for _, w in MIX]
    ids = graph.ids
    n = len(ids)
    seen = graph.facts
    made = 0
    while made < count:
        key = rng.choices(keys, weights)[0]
        rel = graph.relations[key]
        if key in LOCAL:
            a, b = ordered(key, *local_pair(n, rng))
        else:
            a, b = rng.sample(range(n), 2)
            if rel.symmetric:
                a, b = min(a, b), max(a, b)
        if a == b or (ids[a], rel.pk, ids[b]) in seen:
            continue
        seen.add((ids[a], rel.pk, ids[b]))
        old = history and made % 2 == 0
        retired = old and made % 10 == 0
        if key == "prerequisite" and not retired:
            graph.preds[ids[b]].append(ids[a])
        yield Edge(
            source_id=ids[a],
            target_id=ids[b],
            relation_id=rel.pk,
            is_symmetric=rel.symmetric,
            confidence=round(rng.uniform(0.6, 1.0), 2),
            reason="Seeded for the benchmark.",
            valid_at=week_ago if old else now,
            recorded_at=week_ago if old else now,
            status="invalidated" if retired else "active",
            invalid_at=now - timedelta(days=1) if retired else None,
            in_order=in_order,  # made true by ``rebuild_orders`` right after (see above)
            **(evidence(made) if evidence else {}),
        )
        made += 1


def ancestors(target: int, preds: dict[int, list[int]], cap: int | None = None) -> int:
    """How many concepts come before ``target`` by prerequisites (stopping past ``cap``)."""
    seen = {target}
    stack = [target]
    while stack and (cap is None or len(seen) <= cap):
        for p in preds.get(stack.pop(), ()):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return len(seen) - 1


# --- The queue ---------------------------------------------------------------------------

#: The bench lesson every seeded proposal quotes.
LESSON = (
    "Before learning vector search you should understand embeddings.\n"
    "Retrieval-augmented generation builds on vector search and embeddings.\n"
)
#: Flags drawn for seeded proposals (``below_gate`` is added under the gate).
FLAG_MIX = [(), (), (), ("new_concept",), ("contradiction",), ("below_gate",)]
#: The base number of open proposals (``--scale`` multiplies it).
BASE_PROPOSALS = 100_000
#: One proposal in this many of an ordered relation points against the study order, as an
#: extractor's mistakes do: accepting it would close a cycle when a chain leads back.
BACKWARDS_EVERY = 25


def bench_lesson():
    """The source revision every seeded proposal quotes (made once per database)."""
    from kgreview.graph.models import Source
    from kgreview.graph.services import source_import

    found = Source.objects.filter(slug="bench-lesson").first()
    if found is not None:
        return found.current_revision
    return source_import(slug="bench-lesson", title="Bench", text=LESSON, acting_user=None).revision


def concept_end(graph: Curriculum, i: int) -> dict:
    """The payload of an endpoint resolved exactly to the i-th concept."""
    return {"name": graph.names[i], "concept_id": graph.ids[i], "match": "exact", "score": 100.0}


def edge_proposal(source: dict, target: dict, rel, revision, *, confidence, flags, key):
    """An unsaved pending (or held) add_edge proposal quoting the bench lesson; its key
    columns come from ``endpoint_columns``, as an agent's would."""
    from kgreview.review.models import Proposal
    from kgreview.review.services import endpoint_columns, flags_text

    quote = LESSON.splitlines()[0]
    start = revision.text.index(quote)
    payload = {"source": source, "target": target, "relation": rel.key, "weight": 1.0}
    payload["conflicts"] = []
    return Proposal(
        kind=AddEdgeKind.key,
        status="held" if confidence < 0.6 else "pending",
        payload=payload,
        confidence=confidence,
        reason="Seeded for the benchmark.",
        evidence_revision=revision,
        evidence_start=start,
        evidence_end=start + len(quote),
        evidence_quote=quote,
        flags=list(flags),
        flags_text=flags_text(flags),
        dedup_key=key,
        priority=round(confidence * 100) + (100 if "contradiction" in flags else 0),
        document=revision.source,
        **endpoint_columns(AddEdgeKind.key, payload, {rel.key: rel.pk}),
    )


def seed_proposals(graph: Curriculum, count: int, rng: random.Random | None = None) -> int:
    """``count`` open add_edge proposals shaped like the graph: the same relation mix and
    distances (so an ordered relation mostly follows the study order, and one in
    ``BACKWARDS_EVERY`` points against it), never a fact already seeded; then ``ANALYZE``.
    Seeded right after ``seed_curriculum``, a kept seed serves it too."""
    rng = rng or random.Random(PROPOSAL_SEED)
    return seeded("proposals", (count,), rng, lambda: _seed_proposals(graph, count, rng))


def _seed_proposals(graph: Curriculum, count: int, rng: random.Random) -> int:
    from construction import keys
    from kgreview.review.models import Proposal

    revision = bench_lesson()
    kinds = [k for k, _ in MIX]
    weights = [w for _, w in MIX]
    n = len(graph.ids)

    def rows() -> Iterator:
        taken: set[str] = set()
        made = 0
        while made < count:
            key = rng.choices(kinds, weights)[0]
            rel = graph.relations[key]
            if key in LOCAL:
                a, b = ordered(key, *local_pair(n, rng))
                if made % BACKWARDS_EVERY == 0:
                    a, b = b, a
            else:
                a, b = rng.sample(range(n), 2)
            if a == b or (graph.ids[a], rel.pk, graph.ids[b]) in graph.facts:
                continue
            dedup = keys.edge_dedup_key(
                f"c{graph.ids[a]}", key, f"c{graph.ids[b]}", symmetric=rel.symmetric
            )
            if dedup in taken:
                continue
            taken.add(dedup)
            flags = rng.choice(FLAG_MIX)
            confidence = round(rng.uniform(0.3, 1.0), 2)
            if confidence < 0.6:
                flags = tuple(sorted(set(flags) | {"below_gate"}))
            made += 1
            yield edge_proposal(
                concept_end(graph, a),
                concept_end(graph, b),
                rel,
                revision,
                confidence=confidence,
                flags=flags,
                key=dedup,
            )

    with transaction.atomic():
        written = insert_rows(Proposal, rows())
    analyze()
    return written
