"""``manage.py bench ask``: questions in words answered over a 200,000-edge graph.

The graph is ``bench graph``'s curriculum-shaped one (50,000 concepts, a hidden study
order, half the edges a week old and some of those retired). Timed, offline, each
through ``graph.asking.ask_graph`` as the API and the page call it (the question cleaned,
the name index checked for changes, the plan, every walk and the critique):

- set questions, one family after another (what to learn before X, what depends on X,
  what is part of X, what X is part of, what X contrasts with, what X is used for);
- connection questions between two concepts a few hops apart, including the refiner's
  rounds when the first bound falls short, and pairs with no chain at all;
- a run of 200 questions of every family, as a competency-question run would ask them.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from datetime import timedelta

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from kgreview.graph import traversal
from kgreview.graph.asking import ask_graph
from kgreview.graph.models import Concept, Edge
from kgreview.graph.name_index import QUESTION_INDEX

from .common import percentiles, scaled
from .curriculum import BASE_CONCEPTS, BASE_EDGES, seed_curriculum
from .measure import measurement_starts

SET_TEMPLATES = (
    ("prerequisites", "What should I learn before {a}?"),
    ("dependents", "Which topics are affected if my understanding of {a} is wrong?"),
    ("parts", "What is part of {a}?"),
    ("wholes", "What is {a} part of?"),
    ("contrasts", "What does {a} contrast with?"),
    ("uses", "What is {a} used for?"),
)
CONNECTION = "How is {a} connected to {b}?"
BUDGETS_MS = {"set_p95": 50, "connection_p95": 100, "run_200_s": 10}


def _timed(question: str, at=None) -> tuple[float, dict]:
    started = time.perf_counter()
    answer = ask_graph(question, at=at)
    return (time.perf_counter() - started) * 1000, answer.as_json()


def _pairs(ids: list[int], names: dict[int, str], rng: random.Random, count: int) -> list:
    """Pairs two or three hops apart along any relation (so the first bound, or one
    refinement, closes the chain), and as many random pairs (mostly unconnected)."""
    near = []
    for start in rng.sample(ids, count * 4):
        found = traversal.ball(start_id=start, depth=3, direction="both", limit=200)
        far = sorted(c for c, d in found.distance.items() if d >= 2)
        if far:
            near.append((start, rng.choice(far)))
        if len(near) >= count:
            break
    apart = [tuple(rng.sample(ids, 2)) for _ in range(count)]
    return [(names[a], names[b]) for a, b in near + apart]


def bench_ask(*, scale: int = 1, samples: int = 60, seed: int = 23):
    """Offline ask latency over the curriculum-shaped graph at ``scale``."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    concepts = scaled(BASE_CONCEPTS, scale)
    seed_curriculum(concepts=concepts, edges=scaled(BASE_EDGES, scale))
    setup_s = time.perf_counter() - t0
    measurement_starts()
    names = dict(Concept.objects.values_list("pk", "name"))
    touched = set(
        Edge.objects.filter(status="active").values_list("source_id", flat=True)[:200_000]
    )
    pool = sorted(touched)

    # A running server has built its name index already: build it once, untimed.
    t1 = time.perf_counter()
    QUESTION_INDEX.get()
    index_s = time.perf_counter() - t1
    ask_graph("What is " + names[pool[0]] + " used for?")

    by_family: dict[str, list[float]] = {}
    statuses: Counter = Counter()
    sized: dict[str, list[float]] = {"up_to_100": [], "over_100": []}
    sizes: list[int] = []
    for family, template in SET_TEMPLATES:
        times = []
        for cid in rng.sample(pool, samples):
            ms, answer = _timed(template.format(a=names[cid]))
            times.append(ms)
            statuses[(family, answer["status"])] += 1
            size = len(answer["answer"]["concepts"])
            sizes.append(size)
            sized["up_to_100" if size <= 100 else "over_100"].append(ms)
        by_family[family] = times
    set_times = [ms for times in by_family.values() for ms in times]

    connection_times, rounds, found = [], Counter(), 0
    connection_statuses: Counter = Counter()
    unworded = 0  # neither answered nor refused with a sentence saying why
    for a, b in _pairs(pool, names, rng, samples):
        ms, answer = _timed(CONNECTION.format(a=a, b=b))
        connection_times.append(ms)
        rounds[answer["iterations"]] += 1
        found += answer["status"] == "answered"
        connection_statuses[answer["status"]] += 1
        unworded += answer["status"] != "answered" and not (answer["message"] or "").strip()

    week_ago = timezone.now() - timedelta(days=3)
    past = [
        _timed(CONNECTION.format(a=names[a], b=names[b]), at=week_ago)[0]
        for a, b in (rng.sample(pool, 2) for _ in range(samples // 2))
    ]

    questions = []
    for i in range(200):
        if i % 4 == 3:
            a, b = rng.sample(pool, 2)
            questions.append(CONNECTION.format(a=names[a], b=names[b]))
        else:
            questions.append(rng.choice(SET_TEMPLATES)[1].format(a=names[rng.choice(pool)]))
    started = time.perf_counter()
    for question in questions:
        ask_graph(question)
    run_s = time.perf_counter() - started

    retired = Edge.objects.filter(~Q(status="active")).count()
    return {
        "benchmark": "ask",
        "scale": scale,
        "database": connection.vendor,
        "concepts": concepts,
        "edges": Edge.objects.count(),
        "retired_edges": retired,
        "setup_s": round(setup_s, 1),
        "name_index_build_s": round(index_s, 2),
        "set_questions": {
            **percentiles(set_times),
            "per_family_p95_ms": {k: percentiles(v)["p95_ms"] for k, v in by_family.items()},
            # Transitive closures in a 50,000-concept curriculum run to the loop's limit
            # (2,000 concepts per walk): the time follows the answer's size.
            "by_answer_size": {
                k: {**percentiles(v), "questions": len(v)} for k, v in sized.items() if v
            },
            "answer_size_max": max(sizes, default=0),
            "statuses": {f"{f}:{s}": n for (f, s), n in sorted(statuses.items())},
        },
        "connection_questions": {
            **percentiles(connection_times),
            "answered": found,
            "asked": len(connection_times),
            "statuses": dict(sorted(connection_statuses.items())),
            "neither_answered_nor_refused_in_words": unworded,
            "refiner_rounds": {str(k): v for k, v in sorted(rounds.items())},
        },
        "connection_questions_as_of": percentiles(past),
        "run_200_questions_s": round(run_s, 2),
        "budgets": BUDGETS_MS,
    }
