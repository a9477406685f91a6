"""``manage.py bench rdf``: the RDF export and the SHACL validation at scale.

The graph is ``benchmarks.curriculum``'s (50,000 concepts and 200,000 edges at
``--scale 1``), given an ontology on top: ``topic`` with three subtypes (``method``,
``model``, ``metric``) that type every concept in turn, a type ``person`` outside that
tree, patterns on ``applies_to`` and ``builds_on`` (topic → topic, so every typed edge
fits through a subtype) and an integer attribute ``year`` on ``method`` with a value on
one method in ten. Planted, as a grown graph holds them: ten concepts per scale left
untyped, ten typed ``person`` (their ``applies_to`` and ``builds_on`` edges break the
patterns) and ten ``year`` values that are no integer.

Timed: the ``turtle`` export streamed whole (bytes, triples written), the ``shacl``
export, and ``exports.shapes.validate`` (the graph loaded into rdflib, pyshacl over the
shapes, the cycle search), with its violations counted by rule and compared with what
was planted.
"""

from __future__ import annotations

import time

from django.db import connection
from django.utils import timezone

from kgreview.exports import shapes, writers
from kgreview.exports.writers.records import ExportStats
from kgreview.graph import services
from kgreview.graph.models import (
    Attribute,
    AttributeValue,
    Concept,
    ConceptType,
    ConceptTypeChange,
    RelationPattern,
    RelationType,
)

from .common import analyze, insert_rows, scaled
from .curriculum import BASE_CONCEPTS, BASE_EDGES, seed_curriculum
from .measure import measurement_starts

SUBTYPES = ("method", "model", "metric")
PLANTED = 10  # per scale, of each kind


def _ontology(ids: list[int], planted: int) -> dict:
    """Types, patterns and an attribute, every concept typed but the planted ones."""
    services.concept_type_create(key="topic", label="Topic", acting_user=None)
    for key in SUBTYPES:
        services.concept_type_create(
            key=key, label=key.title(), parent_key="topic", acting_user=None
        )
    services.concept_type_create(key="person", label="Person", acting_user=None)
    types = {t.key: t for t in ConceptType.objects.all()}
    for key in ("applies_to", "builds_on"):
        RelationPattern.objects.create(
            relation=RelationType.objects.get(key=key), domain=types["topic"], range=types["topic"]
        )
    year = Attribute.objects.create(
        concept_type=types["method"], key="year", label="Year", datatype="integer"
    )
    untyped = set(ids[:planted])
    people = ids[planted : 2 * planted]
    now = timezone.now()
    typed = {
        pk: ("person" if pk in people else SUBTYPES[i % 3])
        for i, pk in enumerate(ids)
        if pk not in untyped
    }
    for key in (*SUBTYPES, "person"):
        Concept.objects.filter(pk__in=[pk for pk, k in typed.items() if k == key]).update(
            type=types[key]
        )
    insert_rows(
        ConceptTypeChange,
        (
            ConceptTypeChange(concept_id=pk, type=types[k], changed_at=now)
            for pk, k in typed.items()
        ),
    )
    methods = [pk for pk, k in typed.items() if k == "method"][::10]
    values = (
        AttributeValue(
            concept_id=pk,
            attribute=year,
            value="soon" if i < planted else str(1950 + i % 70),
            recorded_at=now,
        )
        for i, pk in enumerate(methods)
    )
    insert_rows(AttributeValue, values)
    analyze()
    return {"untyped": planted, "person": planted, "values": len(methods), "bad_values": planted}


def bench_rdf(*, scale: int = 1, concepts: int | None = None, edges: int | None = None) -> dict:
    """The turtle and shacl exports and validate at ``scale`` (or ``concepts`` and
    ``edges``, for a quick look)."""
    t0 = time.perf_counter()
    graph = seed_curriculum(
        concepts=concepts or scaled(BASE_CONCEPTS, scale),
        edges=edges or scaled(BASE_EDGES, scale),
    )
    planted = _ontology(graph.ids, PLANTED * scale)
    setup_s = time.perf_counter() - t0
    measurement_starts()
    at = timezone.now()

    out: dict = {}
    for fmt in ("turtle", "shacl"):
        stats = ExportStats()
        started = time.perf_counter()
        size = sum(len(c.encode()) for c in writers.FORMATS[fmt].stream(at=at, stats=stats))
        out[fmt] = {
            "seconds": round(time.perf_counter() - started, 2),
            "megabytes": round(size / 1e6, 1),
            "concepts": stats.concepts,
            "edges": stats.edges,
        }

    started = time.perf_counter()
    report = shapes.validate(at=at)
    seconds = time.perf_counter() - started
    kinds: dict[str, int] = {}
    for v in report.violations:
        kinds[v.kind] = kinds.get(v.kind, 0) + 1
    return {
        "benchmark": "rdf",
        "scale": scale,
        "database": connection.vendor,
        "setup_s": round(setup_s, 1),
        "planted": planted,
        "export": out,
        "validate": {"seconds": round(seconds, 1), "violations": kinds},
    }
