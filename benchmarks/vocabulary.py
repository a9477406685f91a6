"""``manage.py bench import-skos``: importing a generated SKOS thesaurus through the queue.

The thesaurus has ``concepts`` concepts (5,000 by default) in one scheme with twenty top
concepts, each with a preferred label, two alternative labels (its initials, which often
clash with another concept's and are then left out, and its words in another order) and
a ``skos:broader`` to a concept before it (a tree). It is imported as
``manage.py import_ontology FILE --map broader=part_of`` does (``agents.ontology_import``:
read, plan, keep the file, queue every proposal of the batch), then imported again, which
must add nothing. The budget: 30 s for the first import.
"""

from __future__ import annotations

import random
import time

from django.db import connection

from benchmarks.measure import measurement_starts
from benchmarks.synthetic import concept_names
from kgreview.agents.ontology_import import ontology_import
from kgreview.review.models import Proposal

BUDGET_S = 30.0
TOPS = 20


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"@en'


def skos_thesaurus(n: int, *, seed: int = 5) -> bytes:
    """A SKOS thesaurus in Turtle: ``n`` concepts, altLabels, broader as a tree."""
    rng = random.Random(seed)
    names = concept_names(n, seed=seed)
    lines = [
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .",
        "@prefix t: <http://example.org/thesaurus/> .",
        't:scheme a skos:ConceptScheme ; skos:prefLabel "Bench thesaurus"@en .',
    ]
    for i, name in enumerate(names):
        words = name.split()
        initials = "".join(w[0] for w in words).upper()
        turned = " ".join(reversed(words))
        parts = [
            f"t:c{i} a skos:Concept",
            f"skos:prefLabel {_literal(name)}",
            f"skos:altLabel {_literal(initials)}, {_literal(turned)}",
        ]
        if i < TOPS:
            parts.append("skos:topConceptOf t:scheme")
        else:
            parts.append(f"skos:broader t:c{rng.randrange(0, i)}")
            parts.append("skos:inScheme t:scheme")
        lines.append(" ;\n    ".join(parts) + " .")
    return ("\n".join(lines) + "\n").encode()


def bench_import_skos(*, concepts: int = 5_000) -> dict:
    raw = skos_thesaurus(concepts)
    measurement_starts()
    started = time.perf_counter()
    first = ontology_import(
        raw=raw, filename="thesaurus.ttl", relation_map=["broader=part_of"], acting_user=None
    )
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    again = ontology_import(
        raw=raw, filename="thesaurus.ttl", relation_map=["broader=part_of"], acting_user=None
    )
    again_s = time.perf_counter() - started
    return {
        "benchmark": "import-skos",
        "database": connection.vendor,
        "concepts": concepts,
        "file_bytes": len(raw),
        "planned": first.planned,
        "import_s": round(first_s, 2),
        "proposed": first.proposed,
        "proposals": first.total,
        "left_out": {item["reason"]: item["count"] for item in first.skipped_by_reason()},
        "reimport_s": round(again_s, 2),
        "reimport_proposals": again.total,
        "queue_after": Proposal.objects.count(),
        "budget": {"import_s": BUDGET_S, "reimport_proposals": 0},
        "within_budget": first_s <= BUDGET_S and again.total == 0,
    }
