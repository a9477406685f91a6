"""``manage.py bench queue``: the review queue's pages, counts and next card.

The data is ``bench review``'s: the curriculum-shaped graph and 100,000 open proposals
shaped like it (times ``--scale``), then ``ANALYZE``. Each filter the Queue page offers is
requested through the test client as a reviewer, five rounds; then each filter's counts,
afresh and cached; a page 200 deep by keyset; and the Review page's next card per filter.
"""

from __future__ import annotations

import time

from django.db import connection
from django.urls import reverse

from kgreview.review import selectors

from .common import percentiles, plain_static, scaled, timed_request
from .curriculum import BASE_CONCEPTS, BASE_EDGES, BASE_PROPOSALS, seed_curriculum, seed_proposals
from .review import HX, reviewer_client

FILTERS = [
    "",
    "status=held",
    "status=open&flag=contradiction",
    "kind=add_edge&relation=prerequisite",
    "cmin=0.8&cmax=0.95&sort=confidence",
    "status=all&sort=newest",
    "flag=new_concept&relation=related",
    "status=rejected",
]


def bench_queue(*, scale: int = 1, seed: int = 4) -> dict:
    """Queue pages, counts and the next card for every filter in ``FILTERS``."""
    started = time.perf_counter()
    concepts, edges = scaled(BASE_CONCEPTS, scale), scaled(BASE_EDGES, scale)
    graph = seed_curriculum(concepts=concepts, edges=edges)
    proposals = seed_proposals(graph, scaled(BASE_PROPOSALS, scale))
    setup_s = time.perf_counter() - started
    with plain_static():
        client, _user = reviewer_client("bench-queue")
        result = _measure(client)
    page_p95 = result["queue_page"]["p95_ms"]
    return {
        "benchmark": "queue",
        "database": connection.vendor,
        "proposals": proposals,
        "concepts": concepts,
        "edges": edges,
        "setup_s": round(setup_s, 1),
        **result,
        "budget": {"queue_p95_ms": 150},
        "within_budget": page_p95 <= 150,
    }


def _measure(client) -> dict:
    queue = reverse("review:queue")
    page_times: list[float] = []
    page_queries: dict[str, int] = {}
    by_filter: dict[str, list[float]] = {}
    for _round in range(5):
        for q in FILTERS:
            elapsed, queries, _ = timed_request(client, "get", queue + "?" + q)
            page_times.append(elapsed)
            page_queries[q or "(default)"] = queries
            by_filter.setdefault(q or "(default)", []).append(elapsed)
    from django.core.cache import cache

    counts_cold: list[float] = []
    counts_warm: list[float] = []
    counts = reverse("review:queue-counts")
    for q in FILTERS:
        cache.clear()
        counts_cold.append(timed_request(client, "get", counts + "?" + q)[0])
        counts_warm.append(timed_request(client, "get", counts + "?" + q)[0])
    # The keyset: page 200 costs what page 1 costs.
    f = selectors.QueueFilter()
    cursor = None
    for _ in range(200):
        cursor = selectors.queue_page(f, after=cursor).next_cursor
    deep_ms, deep_queries, _ = timed_request(client, "get", queue + f"?after={cursor}")
    focus = reverse("review:focus")
    focus_times = [timed_request(client, "get", focus + "?" + q, headers=HX)[0] for q in FILTERS]
    return {
        "queue_page": {
            **percentiles(page_times),
            "queries_by_filter": page_queries,
            "p95_ms_by_filter": {k: percentiles(v)["p95_ms"] for k, v in by_filter.items()},
        },
        "queue_page_200_deep": {"ms": round(deep_ms, 2), "queries": deep_queries},
        "queue_counts_cold": percentiles(counts_cold),
        "queue_counts_cached": percentiles(counts_warm),
        "focus_card": percentiles(focus_times),
    }
