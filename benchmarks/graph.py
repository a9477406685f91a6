"""``manage.py bench graph``: multi-hop reads over a 200,000-edge graph.

The synthetic graph is shaped like a curriculum: 50,000 concepts in a hidden study
order; a prerequisite or builds_on edge joins a concept to one a little earlier in that
order (a geometric distance), so chains run deep and closures overlap, while the other
relations join concepts anywhere. Half the edges were recorded a week ago and some of
those invalidated since, so ``as_of`` reads walk a table with real history in it.

Timed (each query on its own, then the whole API request through the test client with
a bearer token): the 3-hop prerequisite closure of random concepts, the learning path of
targets with about 500 ancestors, and the depth-2 neighbourhood of random concepts.
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

from kgreview.graph import traversal
from kgreview.graph.models import Edge, RelationType

from .common import percentiles, scaled
from .curriculum import BASE_CONCEPTS, BASE_EDGES, ancestors, seed_curriculum


def _targets_with_ancestors(ids, preds, rng, want: int, count: int) -> list[tuple[int, int]]:
    """Concepts whose prerequisite closure holds about ``want`` concepts (±20%)."""
    found: list[tuple[int, int]] = []
    pool = ids[:]
    rng.shuffle(pool)
    for cid in pool:
        size = ancestors(cid, preds, cap=int(want * 1.2) + 1)
        if want * 0.8 <= size <= want * 1.2:
            found.append((cid, size))
            if len(found) >= count:
                break
    return found


def _time(fn, repeat: int = 1) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - started) * 1000 / repeat


def bench_graph(*, scale: int = 1, samples: int = 300, seed: int = 17) -> dict:
    """Multi-hop reads against the curriculum-shaped graph at ``scale``."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    concepts = scaled(BASE_CONCEPTS, scale)
    graph = seed_curriculum(rng=rng, concepts=concepts, edges=scaled(BASE_EDGES, scale))
    ids, preds = graph.ids, graph.preds
    setup_s = time.perf_counter() - t0
    prereq = RelationType.objects.get(key="prerequisite").pk
    orders = {prereq: "source_first"}
    week_ago = timezone.now() - timedelta(days=3)
    picks = [rng.choice(ids) for _ in range(samples)]
    targets = _targets_with_ancestors(ids, preds, rng, want=500, count=30)

    # Warm the connection and caches once, as a running server would be.
    traversal.ball(start_id=picks[0], depth=3, direction="in", relation_ids=[prereq])

    closure = [
        _time(
            lambda c=c: traversal.ball(start_id=c, depth=3, direction="in", relation_ids=[prereq])
        )
        for c in picks
    ]
    closure_sizes = [
        len(traversal.ball(start_id=c, depth=3, direction="in", relation_ids=[prereq]).distance) - 1
        for c in picks[:50]
    ]
    closure_past = [
        _time(
            lambda c=c: traversal.ball(
                start_id=c, depth=3, direction="in", relation_ids=[prereq], at=week_ago
            )
        )
        for c in picks
    ]
    neighbours = [
        _time(lambda c=c: traversal.ball(start_id=c, depth=2, direction="both")) for c in picks
    ]
    neighbour_sizes = [
        len(traversal.ball(start_id=c, depth=2, direction="both").distance) for c in picks[:50]
    ]
    learning = [
        _time(lambda t=t: traversal.learning_path(target_id=t, relations=orders))
        for t, _size in targets
    ]
    learning_past = [
        _time(lambda t=t: traversal.learning_path(target_id=t, relations=orders, at=week_ago))
        for t, _size in targets
    ]

    # The same reads as a downstream agent makes them: HTTP, auth, JSON.
    from kgreview.api.services import api_token_create

    user = get_user_model().objects.create_user(username="bench-agent", password="x")
    user.groups.add(Group.objects.get(name="viewer"))
    token = api_token_create(user=user, name="bench", acting_user=None).secret
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
            (
                "learning_path",
                lambda c: f"/api/v1/concepts/{c}/learning-path",
                [t for t, _ in targets],
            ),
        ]
        for name, url, items in calls:
            for c in items:
                with CaptureQueriesContext(connection) as ctx:
                    ms = _time(lambda c=c, url=url: client.get(url(c)))
                api[name].append(ms)
                queries[name] = max(queries.get(name, 0), len(ctx.captured_queries))

    return {
        "benchmark": "graph",
        "scale": scale,
        "database": connection.vendor,
        "concepts": concepts,
        "edges": Edge.objects.count(),
        "active_edges": Edge.objects.filter(status="active").count(),
        "setup_s": round(setup_s, 1),
        "closure_3_hops": {
            **percentiles(closure),
            "concepts_found_median": sorted(closure_sizes)[len(closure_sizes) // 2],
        },
        "closure_3_hops_as_of": percentiles(closure_past),
        "neighbours_depth_2": {
            **percentiles(neighbours),
            "concepts_found_median": sorted(neighbour_sizes)[len(neighbour_sizes) // 2],
        },
        "learning_path_500": {
            **(percentiles(learning) if learning else {}),
            "targets": len(targets),
            "ancestors_median": sorted(s for _, s in targets)[len(targets) // 2] if targets else 0,
        },
        "learning_path_500_as_of": percentiles(learning_past) if learning_past else {},
        "api": {
            name: {**percentiles(v), "queries_max": queries[name]} for name, v in api.items() if v
        },
        "budgets_ms": {"closure_3_hops_p50": 20, "learning_path_500": 50, "neighbours_depth_2": 20},
    }
