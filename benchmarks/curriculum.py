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

import random
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from construction.synthetic import concept_names

from .common import analyze, insert_rows, seed_concepts

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

    def position(self) -> dict[int, int]:
        return {cid: i for i, cid in enumerate(self.ids)}


Evidence = Callable[[int], dict]


def seed_curriculum(
    *,
    rng: random.Random,
    concepts: int = BASE_CONCEPTS,
    edges: int = BASE_EDGES,
    names: list[str] | None = None,
    history: bool = True,
    evidence: Evidence | None = None,
) -> Curriculum:
    """Seed ``concepts`` concepts and ``edges`` edges shaped like a curriculum, then
    ``ANALYZE``. ``evidence(i)``, when given, returns the evidence fields of the i-th edge
    (``evidence_revision_id``, ``evidence_start``, ``evidence_end``, ``evidence_quote``)."""
    from kgreview.graph.models import RelationType

    names = names or concept_names(concepts)
    ids = seed_concepts(names)
    relations = {r.key: r for r in RelationType.objects.all()}
    graph = Curriculum(ids=ids, names=names, relations=relations)
    with transaction.atomic():
        graph.edges = insert_rows(_edge_model(), _edges(graph, edges, rng, history, evidence))
    analyze()
    return graph


def _edge_model():
    from kgreview.graph.models import Edge

    return Edge


def _edges(graph: Curriculum, count: int, rng, history: bool, evidence) -> Iterator:
    Edge = _edge_model()
    now = timezone.now()
    week_ago = now - timedelta(days=7)
    keys = [k for k, _ in MIX]
    weights = [w for _, w in MIX]
    ids = graph.ids
    n = len(ids)
    seen: set[tuple[int, int, int]] = set()
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
