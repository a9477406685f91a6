"""``manage.py bench competency``: a run of 200 competency questions over a 200,000-edge
graph (the budget: the whole run in at most 10 s, offline planner).

The graph is ``bench graph``'s curriculum-shaped one. The questions are a mix a curator
would write: what to learn before a concept (expecting one of its direct prerequisites),
how two concepts a few prerequisite hops apart are connected (a path), and whether one
is a prerequisite for another (yes). Timed: the run itself (every question asked, judged
and its result written), and each question's ask latency as the run records it.
"""

from __future__ import annotations

import random
import time
from collections import Counter

from kgreview.questions.models import CompetencyQuestion, QuestionResult
from kgreview.questions.runs import competency_run_create, competency_run_execute

from .common import percentiles, scaled
from .curriculum import BASE_CONCEPTS, BASE_EDGES, seed_curriculum
from .measure import measurement_starts


def _questions(ids, names, preds, rng, count: int) -> list[CompetencyQuestion]:
    """``count`` questions: half sets, a quarter paths, a quarter yes / no."""
    with_preds = [cid for cid in ids if preds.get(cid)]
    rng.shuffle(with_preds)
    made = []
    for i, target in enumerate(with_preds[:count]):
        before = rng.choice(preds[target])
        kind = "concepts" if i % 4 < 2 else ("path" if i % 4 == 2 else "yes_no")
        if kind == "concepts":
            text, expected, yes = (
                f"What should I learn before {names[target]}?",
                [names[before]],
                None,
            )
        elif kind == "path":
            text = f"How is {names[target]} connected to {names[before]}?"
            expected, yes = [names[target], names[before]], None
        else:
            text = f"Is {names[before]} a prerequisite for {names[target]}?"
            expected, yes = [], True
        made.append(
            CompetencyQuestion(
                text=text[:500], expect=kind, expected_names=expected, expected_yes=yes
            )
        )
    return CompetencyQuestion.objects.bulk_create(made)


def bench_competency(*, scale: int = 1, questions: int = 200, seed: int = 19) -> dict:
    """Seed the graph and the questions, then time one run of them all."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    concepts, edges = scaled(BASE_CONCEPTS, scale), scaled(BASE_EDGES, scale)
    graph = seed_curriculum(concepts=concepts, edges=edges)
    ids, preds = graph.ids, graph.preds
    names = dict(zip(graph.ids, graph.names, strict=True))
    made = _questions(ids, names, preds, rng, questions)
    setup_s = time.perf_counter() - t0
    measurement_starts()

    # Warm the caches once (the question index, the connection), as a running worker is.
    warm = competency_run_create(question_id=made[0].pk)
    competency_run_execute(run_id=warm.pk, claim="bench-warm")

    started = time.perf_counter()
    run = competency_run_create()
    run = competency_run_execute(run_id=run.pk, claim="bench")
    run_s = time.perf_counter() - started
    results = list(QuestionResult.objects.filter(run=run))
    by_kind: dict[str, Counter] = {}
    for r in results:
        kind = next(q.expect for q in made if q.pk == r.question_id)
        by_kind.setdefault(kind, Counter())["pass" if r.passed else "fail"] += 1
    return {
        "benchmark": "competency",
        "scale": scale,
        "concepts": concepts,
        "edges": edges,
        "questions": len(results),
        "setup_s": round(setup_s, 2),
        "run_s": round(run_s, 3),
        "budget_run_s": 10.0,
        "within_budget": run_s <= 10.0,
        "passed": run.passed,
        "failed": run.failed,
        "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
        "ask_latency": percentiles([r.latency_ms for r in results]),
    }
