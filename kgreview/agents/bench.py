"""Benchmarks behind ``manage.py bench``: synthetic data, timed on the configured database.

Each benchmark runs in a database of its own (created next to the configured one and
dropped afterwards), so measuring never touches real data.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from construction.synthetic import concept_names, typo
from construction.text import name_key

FILLER = [
    "In practice the details matter more than the names suggest.",
    "Engineers usually meet this idea long before they can name it.",
    "The trade-offs change with the size of the data and the budget for latency.",
    "A small experiment on your own data is worth more than any benchmark table.",
    "Most production systems combine several of these ideas at once.",
    "It helps to sketch the data flow on paper before writing any code.",
]
CUES = [
    "Before learning {b} you should understand {a}.",
    "{a} is a prerequisite for {b}.",
    "{b} builds on {a}.",
    "{a} is part of {b}.",
    "Unlike {a}, {b} keeps its state small.",
    "{a} is used for {b}.",
    "{a} is related to {b}.",
    "{b} depends on {a}.",
    "{a} is an alternative to {b}.",
]


def lesson_text(title: str, names: list[str], rng: random.Random, words: int = 250) -> str:
    parts = [f"# {title}", ""]
    count = 0
    while count < words:
        if rng.random() < 0.45:
            # Names are drawn in list order, so prerequisite-like cues respect a hidden
            # topological order, as a curriculum does: the graph is a DAG, not a tangle.
            i, j = sorted(rng.sample(range(len(names)), 2))
            a, b = names[i], names[j]
            sentence = rng.choice(CUES).format(a=a.lower(), b=b.lower())
        else:
            sentence = rng.choice(FILLER)
        parts.append(sentence)
        count += len(sentence.split())
    return "\n".join(parts) + "\n"


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 4)

    return {
        "mean_ms": round(statistics.fmean(ordered), 4),
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "max_ms": round(ordered[-1], 4),
    }


@contextmanager
def scratch_database(*, keep: bool = False) -> Iterator[str]:
    """A freshly migrated database of the configured engine, dropped afterwards."""
    settings_dict = connection.settings_dict
    test_settings = settings_dict.setdefault("TEST", {})
    if connection.vendor == "sqlite":
        test_settings["NAME"] = str(settings.VAR_DIR / "bench.sqlite3")
    else:
        test_settings["NAME"] = f"{settings_dict['NAME']}_bench"
    old_name = settings_dict["NAME"]
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield name
    finally:
        if not keep:
            connection.creation.destroy_test_db(old_name, verbosity=0)


def seed_concepts(names: list[str], *, alias_every: int = 3) -> None:
    """Bulk-insert concepts with their canonical name rows (and some aliases)."""
    from kgreview.graph.models import Concept, ConceptAlias

    batch = 5000
    for start in range(0, len(names), batch):
        chunk = names[start : start + batch]
        with transaction.atomic():
            concepts = Concept.objects.bulk_create([Concept(name=n) for n in chunk])
            if concepts[0].pk is None:  # backends that do not return ids
                concepts = list(Concept.objects.filter(name__in=chunk))
            aliases = [ConceptAlias(concept=c, name=c.name, kind="canonical") for c in concepts]
            aliases += [
                ConceptAlias(
                    concept=c,
                    name="".join(w[0] for w in c.name.split()).upper() + f"-{c.pk}",
                    kind="alias",
                )
                for i, c in enumerate(concepts)
                if i % alias_every == 0
            ]
            for alias in aliases:
                alias.key = name_key(alias.name)[:200]
            ConceptAlias.objects.bulk_create(aliases)


def bench_resolve(*, concepts: int = 50_000, lookups: int = 20_000, seed: int = 11) -> dict:
    """Endpoint resolution against ``concepts`` concepts: exact, alias, near miss, unknown."""
    from construction.resolve import resolve_name

    from .adapters import INDEX_CACHE

    names = concept_names(concepts)
    seed_concepts(names)
    INDEX_CACHE.clear()
    started = time.perf_counter()
    index = INDEX_CACHE.get()
    build_s = time.perf_counter() - started
    rng = random.Random(seed)
    unknown = concept_names(concepts + lookups, seed=seed + 1)[-lookups:]
    probes: list[tuple[str, str]] = []
    for i in range(lookups):
        kind = ("exact", "exact", "typo", "unknown")[i % 4]
        if kind == "exact":
            probes.append((kind, rng.choice(names).lower()))
        elif kind == "typo":
            probes.append((kind, typo(rng.choice(names), rng)))
        else:
            probes.append((kind, unknown[i]))
    samples: dict[str, list[float]] = {"exact": [], "typo": [], "unknown": []}
    outcomes: dict[str, dict[str, int]] = {k: {} for k in samples}
    for kind, probe in probes:
        t0 = time.perf_counter()
        res = resolve_name(probe, index)
        samples[kind].append((time.perf_counter() - t0) * 1000)
        match = res.match if res else "unresolvable"
        outcomes[kind][match] = outcomes[kind].get(match, 0) + 1
    every = [s for values in samples.values() for s in values]
    return {
        "benchmark": "resolve",
        "database": connection.vendor,
        "concepts": concepts,
        "index_entries": len(index),
        "index_build_s": round(build_s, 3),
        "lookups": lookups,
        "all": percentiles(every),
        "by_kind": {k: percentiles(v) for k, v in samples.items()},
        "outcomes": outcomes,
        "budget": {"mean_ms": 2.0},
        "within_budget": statistics.fmean(every) <= 2.0,
    }


def bench_construct(*, sources: int = 300, concepts: int = 5_000, seed: int = 5) -> dict:
    """Offline construction over synthetic lessons, database writes included."""
    from kgreview.graph.models import Source
    from kgreview.graph.services import source_import

    from . import services
    from .adapters import INDEX_CACHE
    from .models import AgentRunItem

    names = concept_names(concepts)
    seed_concepts(names)
    rng = random.Random(seed)
    lesson_names = names[: max(50, concepts // 10)] + concept_names(500, seed=seed + 9)
    for i in range(sources):
        text = lesson_text(f"Lesson {i}", lesson_names, rng)
        source_import(slug=f"bench-{i:05d}", title=f"Lesson {i}", text=text)
    INDEX_CACHE.clear()
    INDEX_CACHE.get()  # a worker keeps its index warm; its first build is reported apart
    run = services.construct_run_create(sources=Source.objects.all(), provider="offline")
    item_ids = list(run.items.values_list("pk", flat=True))
    per_source: list[float] = []
    started = time.perf_counter()
    for item_id in item_ids:
        t0 = time.perf_counter()
        services.construct_item_run(item_id=item_id, claim="bench")
        per_source.append((time.perf_counter() - t0) * 1000)
    elapsed = time.perf_counter() - started
    run.refresh_from_db()
    failed = run.items.filter(status=AgentRunItem.Status.FAILED).count()
    rate = sources / elapsed if elapsed else 0.0
    return {
        "benchmark": "construct",
        "database": connection.vendor,
        "sources": sources,
        "seeded_concepts": concepts,
        "seconds": round(elapsed, 3),
        "sources_per_second": round(rate, 1),
        "per_source": percentiles(per_source),
        "failed_sources": failed,
        "proposals": run.stats.get("proposals", {}),
        "dropped": run.stats.get("dropped", {}),
        "budget": {"sources_per_second": 50},
        "within_budget": rate >= 50 and failed == 0,
    }


def bench_heal(*, concepts: int = 50_000, edges: int = 200_000, seed: int = 13) -> dict:
    """The self-healing agent over a large graph, with planted duplicates and cycles."""
    from kgreview.graph.models import Concept, Edge, RelationType
    from kgreview.review.bench import _seed_edges

    from .heal import heal_run
    from .models import AgentRun

    rng = random.Random(seed)
    names = concept_names(concepts)
    # Plant near-duplicates: about one in a thousand concepts gets a plural twin.
    twins = [n + "s" for n in names[: max(1, concepts // 1000)]]
    seed_concepts(names + twins)
    ids = list(Concept.objects.order_by("pk").values_list("pk", flat=True))
    relations = list(RelationType.objects.filter(active=True).order_by("key"))
    with transaction.atomic():
        _seed_edges(ids, relations, edges, rng)
        # Plant a few cycles against the hidden order, as legacy data might hold.
        prerequisite = next(r for r in relations if r.key == "prerequisite")
        now = timezone.now()
        for i in range(5):
            a, b = ids[100 + i * 7], ids[50 + i * 7]
            if not Edge.objects.filter(
                source_id=a, target_id=b, relation=prerequisite, status="active"
            ).exists():
                Edge.objects.create(
                    source_id=a,
                    target_id=b,
                    relation=prerequisite,
                    confidence=0.3,
                    reason="Planted.",
                    valid_at=now,
                    recorded_at=now,
                )
                Edge.objects.get_or_create(
                    source_id=b,
                    target_id=a,
                    relation=prerequisite,
                    status="active",
                    defaults={
                        "confidence": 0.9,
                        "reason": "Planted.",
                        "valid_at": now,
                        "recorded_at": now,
                    },
                )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE")
    from .services import agent_run_create

    run = agent_run_create(agent=AgentRun.Agent.HEAL)
    started = time.perf_counter()
    run = heal_run(run)
    elapsed = time.perf_counter() - started
    by_name = dict(Concept.objects.values_list("name", "pk"))
    planted = {
        frozenset((by_name[n], by_name[n + "s"]))
        for n in names[: len(twins)]
        if n in by_name and n + "s" in by_name
    }
    from kgreview.review.models import Proposal

    proposed = {
        frozenset((p["survivor_id"], p["loser_id"]))
        for p in Proposal.objects.filter(kind="merge_concepts", agent_run=run).values_list(
            "payload", flat=True
        )
    }
    return {
        "benchmark": "heal",
        "planted_twins_found": len(planted & proposed),
        "planted_cycles": 5,
        "database": connection.vendor,
        "concepts": len(ids),
        "edges": Edge.objects.filter(status="active").count(),
        "planted_twins": len(twins),
        "seconds": round(elapsed, 2),
        "status": run.status,
        "stats": run.stats,
        "budget": {"seconds": 60},
        "within_budget": elapsed < 60 and run.status == "succeeded",
    }


def bench_review(**kwargs) -> dict:
    from kgreview.review.bench import bench_review as run

    return run(**kwargs)


def bench_bulk(**kwargs) -> dict:
    from kgreview.review.bench import bench_bulk as run

    return run(**kwargs)


def bench_graph(**kwargs) -> dict:
    from kgreview.graph.bench import bench_graph as run

    return run(**kwargs)


def bench_documents(**kwargs) -> dict:
    from .bench_documents import bench_documents as run

    return run(**kwargs)


def bench_document_memory(**kwargs) -> dict:
    from .bench_documents import bench_document_memory as run

    return run(**kwargs)


BENCHMARKS: dict[str, Callable[..., dict]] = {
    "documents": bench_documents,
    "document-memory": bench_document_memory,
    "resolve": bench_resolve,
    "construct": bench_construct,
    "review": bench_review,
    "bulk": bench_bulk,
    "heal": bench_heal,
    "graph": bench_graph,
}
