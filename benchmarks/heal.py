"""``manage.py bench heal``: the self-healing agent over the curriculum-shaped graph."""

from __future__ import annotations

import random
import time

from django.db import connection, transaction
from django.utils import timezone

from construction.synthetic import concept_names

from .common import analyze, scaled
from .curriculum import BASE_CONCEPTS


def bench_heal(*, scale: int = 1, seed: int = 13) -> dict:
    """The self-healing agent over the curriculum-shaped graph, with planted duplicates
    and cycles."""
    from kgreview.agents.heal import heal_run
    from kgreview.agents.models import AgentRun
    from kgreview.graph.models import Concept, Edge

    from .curriculum import BASE_EDGES, seed_curriculum

    rng = random.Random(seed)
    concepts = scaled(BASE_CONCEPTS, scale)
    names = concept_names(concepts)
    # Plant near-duplicates: about one in a thousand concepts gets a plural twin.
    twins = [n + "s" for n in names[: max(1, concepts // 1000)]]
    graph = seed_curriculum(rng=rng, names=names + twins, edges=scaled(BASE_EDGES, scale))
    ids = graph.ids
    prerequisite = graph.relations["prerequisite"]
    with transaction.atomic():
        # Plant a few cycles against the hidden order, as legacy data might hold.
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
    analyze()
    from kgreview.agents.runs import agent_run_create

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
        "scale": scale,
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
