"""Benchmarks of the agents: endpoint resolution, offline construction, self-healing."""

from __future__ import annotations

import random
import statistics
import time

from django.db import connection

from construction.synthetic import concept_names, typo

from .common import analyze, lesson_text, percentiles, scaled, seed_concepts
from .curriculum import BASE_CONCEPTS


def bench_resolve(*, scale: int = 1, lookups: int = 20_000, seed: int = 11) -> dict:
    """Endpoint resolution against 50,000 concepts times ``scale``: exact, alias, near
    miss, unknown."""
    from construction.resolve import resolve_name
    from kgreview.agents.adapters import INDEX_CACHE

    concepts = scaled(BASE_CONCEPTS, scale)
    names = concept_names(concepts)
    seed_concepts(names)
    analyze()
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


def bench_construct(*, scale: int = 1, sources: int = 300, seed: int = 5) -> dict:
    """Offline construction over synthetic lessons, database writes included, with 5,000
    concepts times ``scale`` in the graph."""
    from kgreview.agents.adapters import INDEX_CACHE
    from kgreview.agents.construct import construct_item_run, construct_run_create
    from kgreview.agents.models import AgentRunItem
    from kgreview.graph.models import Source
    from kgreview.graph.services import source_import

    concepts = scaled(5_000, scale)
    names = concept_names(concepts)
    seed_concepts(names)
    rng = random.Random(seed)
    lesson_names = names[: max(50, concepts // 10)] + concept_names(500, seed=seed + 9)
    for i in range(sources):
        text = lesson_text(f"Lesson {i}", lesson_names, rng)
        source_import(slug=f"bench-{i:05d}", title=f"Lesson {i}", text=text, acting_user=None)
    analyze()
    INDEX_CACHE.clear()
    INDEX_CACHE.get()  # a worker keeps its index warm; its first build is reported apart
    run = construct_run_create(sources=Source.objects.all(), provider="offline")
    item_ids = list(run.items.values_list("pk", flat=True))
    per_source: list[float] = []
    started = time.perf_counter()
    for item_id in item_ids:
        t0 = time.perf_counter()
        construct_item_run(item_id=item_id, claim="bench")
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
