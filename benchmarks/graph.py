"""``manage.py bench graph``: multi-hop reads over the curriculum-shaped graph.

The graph is ``benchmarks.curriculum``'s (50,000 concepts and 200,000 edges at
``--scale 1``, times 5 or 10), with real history for ``as_of`` reads. Every walk starts
at a concept drawn at random from all of them, never one chosen for its size.

Timed (each query on its own, then the whole API request through the test client with
a bearer token): the 3-hop prerequisite closure, the depth-2 neighbourhood and the
depth-6 neighbourhood at the API's default limit of 200 concepts; the learning path of
random targets, reported by how many concepts each needs (half need more than a
thousand at 1×: those over ``KG_LEARNING_PATH_LIMIT`` are cut by the walk and refused by
the API in words), and the same targets' last three levels (``depth=3``).
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone

from kgreview.graph import learning, traversal
from kgreview.graph.models import Edge, RelationType

from .common import percentiles, scaled
from .curriculum import BASE_CONCEPTS, BASE_EDGES, ancestors, seed_curriculum
from .measure import measurement_starts


def _time(fn, repeat: int = 1) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - started) * 1000 / repeat


def bench_graph(*, scale: int = 1, samples: int = 300, seed: int = 17) -> dict:
    """Multi-hop reads against the curriculum-shaped graph at ``scale``, from random
    concepts."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    concepts = scaled(BASE_CONCEPTS, scale)
    graph = seed_curriculum(concepts=concepts, edges=scaled(BASE_EDGES, scale))
    ids, preds = graph.ids, graph.preds
    setup_s = time.perf_counter() - t0
    measurement_starts()
    prereq = RelationType.objects.get(key="prerequisite").pk
    week_ago = timezone.now() - timedelta(days=3)
    picks = [rng.choice(ids) for _ in range(samples)]
    targets = [rng.choice(ids) for _ in range(min(samples, 100))]

    # Warm the connection and caches once, as a running server would be.
    traversal.ball(start_id=picks[0], depth=3, direction="in", relation_ids=[prereq])
    walks = _walks(picks, prereq, week_ago)
    paths = _learning_paths(targets, preds, prereq, week_ago)
    api, queries = _through_the_api(picks, targets)
    return {
        "benchmark": "graph",
        "scale": scale,
        "database": connection.vendor,
        "concepts": concepts,
        "edges": Edge.objects.count(),
        "active_edges": Edge.objects.filter(status="active").count(),
        "setup_s": round(setup_s, 1),
        **walks,
        **paths,
        "api": {
            name: {**percentiles(v), "queries_max": queries[name]} for name, v in api.items() if v
        },
        "budgets_ms": {"closure_3_hops_p50": 20, "learning_path_500": 50, "neighbours_depth_2": 20},
    }


def _walks(picks: list[int], prereq: int, week_ago) -> dict:
    def closure(c, at=None):
        return traversal.ball(start_id=c, depth=3, direction="in", relation_ids=[prereq], at=at)

    closure_ms = [_time(lambda c=c: closure(c)) for c in picks]
    closure_past = [_time(lambda c=c: closure(c, week_ago)) for c in picks]
    neighbours = [
        _time(lambda c=c: traversal.ball(start_id=c, depth=2, direction="both")) for c in picks
    ]
    # The deepest walk the API allows, at its default limit: bounded by concepts.
    deep = [
        _time(lambda c=c: traversal.ball(start_id=c, depth=6, direction="both", limit=200))
        for c in picks[:100]
    ]
    return {
        "closure_3_hops": {
            **percentiles(closure_ms),
            "concepts_found_median": _median([len(closure(c).distance) - 1 for c in picks[:50]]),
        },
        "closure_3_hops_as_of": percentiles(closure_past),
        "neighbours_depth_2": {
            **percentiles(neighbours),
            "concepts_found_median": _median(
                [len(traversal.ball(start_id=c, depth=2).distance) for c in picks[:50]]
            ),
        },
        "neighbours_depth_6_limit_200": percentiles(deep),
    }


def _median(values: list[int]) -> int:
    return sorted(values)[len(values) // 2] if values else 0


def _learning_paths(targets: list[int], preds, prereq: int, week_ago) -> dict:
    """Learning paths of random targets, by how many concepts they need: those over
    ``KG_LEARNING_PATH_LIMIT`` are cut by the walk (the API refuses them in words), and
    each target's last three levels (``depth=3``) are timed too."""
    orders = {prereq: "source_first"}
    limit = learning.learning_path_limit()
    buckets: dict[str, list[float]] = defaultdict(list)
    sizes, past, shallow = [], [], []
    for t in targets:
        size = ancestors(t, preds, cap=limit)
        sizes.append(size)
        ms = _time(lambda t=t: learning.learning_path(target_id=t, relations=orders))
        bucket = "up_to_500" if size <= 500 else ("over_limit" if size >= limit else "over_500")
        buckets[bucket].append(ms)
        past.append(
            _time(lambda t=t: learning.learning_path(target_id=t, relations=orders, at=week_ago))
        )
        shallow.append(
            _time(lambda t=t: learning.learning_path(target_id=t, relations=orders, depth=3))
        )
    every = [ms for values in buckets.values() for ms in values]
    return {
        "learning_path_random": {
            **percentiles(every),
            "targets": len(targets),
            "ancestors_median": _median(sizes),
            "over_limit": len(buckets["over_limit"]),
            "limit": limit,
            "by_ancestors": {k: percentiles(v) for k, v in sorted(buckets.items())},
        },
        "learning_path_random_as_of": percentiles(past),
        "learning_path_depth_3": percentiles(shallow),
    }


def _through_the_api(picks: list[int], targets: list[int]):
    """The same reads as a downstream agent makes them: HTTP, auth, JSON."""
    from kgreview.api.services import api_token_create

    user = get_user_model().objects.create_user(username="bench-agent", password="x")
    user.groups.add(Group.objects.get(name="viewer"))
    token = api_token_create(owner=user, name="bench", acting_user=None).secret
    client = Client(headers={"Authorization": f"Bearer {token}"})
    api: dict[str, list[float]] = defaultdict(list)
    queries: dict[str, int] = {}
    # The rate limits are off: this measures the answers, and one bench token asks for
    # more walks in a minute than KG_API_HEAVY_RATE allows a client.
    unlimited = {"KG_API_RATE": "off", "KG_API_HEAVY_RATE": "off"}
    with override_settings(ALLOWED_HOSTS=["testserver"], DEBUG=False, **unlimited):
        client.get("/api/v1/relations")
        calls = [
            (
                "closure_3_hops",
                lambda c: (
                    f"/api/v1/concepts/{c}/neighbours?depth=3&direction=in&relation=prerequisite"
                ),
                picks[:100],
            ),
            (
                "neighbours_depth_2",
                lambda c: f"/api/v1/concepts/{c}/neighbours?depth=2",
                picks[:100],
            ),
            ("learning_path", lambda c: f"/api/v1/concepts/{c}/learning-path", targets),
            (
                "learning_path_depth_3",
                lambda c: f"/api/v1/concepts/{c}/learning-path?depth=3",
                targets,
            ),
        ]
        for name, url, items in calls:
            for c in items:
                with CaptureQueriesContext(connection) as ctx:
                    ms = _time(lambda c=c, url=url: client.get(url(c)))
                api[name].append(ms)
                queries[name] = max(queries.get(name, 0), len(ctx.captured_queries))
    return api, queries
