"""``manage.py bench queue``: the review queue's pages, counts and next card, in a queue
that is being decided.

The data is ``bench review``'s: the curriculum-shaped graph and 100,000 open proposals
shaped like it (times ``--scale``), then ``ANALYZE``. Every round requests each filter the
Queue page offers (``FILTERS``) through the test client as a reviewer, then its counts
as the page loads them after itself, then takes ``DECISIONS_PER_ROUND`` decisions through
the decision views (accept and reject in turn, on random open proposals), so pages and
counts are measured in a queue that keeps changing. Counts are also measured afresh
(cache emptied) per filter. Then a page 200 deep by keyset, and the Review page's next
card per filter.
"""

from __future__ import annotations

import random
import time

from django.core.cache import cache
from django.db import connection
from django.urls import reverse

from kgreview.review.models import Proposal
from kgreview.review.workspace import selectors

from .common import percentiles, plain_static, scaled, timed_request
from .curriculum import BASE_CONCEPTS, BASE_EDGES, BASE_PROPOSALS, seed_curriculum, seed_proposals
from .measure import measurement_starts
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
    # A flag no seeded proposal carries, and a common flag over every status by confidence.
    "status=open&flag=previously_rejected",
    "status=all&flag=contradiction&sort=confidence",
]
ROUNDS = 6
DECISIONS_PER_ROUND = 10
BUDGET = {"queue_p95_ms": 150, "counts_p95_ms": 200}


def bench_queue(*, scale: int = 1, seed: int = 4) -> dict:
    """Queue pages, counts and the next card for every filter in ``FILTERS``, with
    decisions taken between the rounds."""
    rng = random.Random(seed)
    started = time.perf_counter()
    concepts, edges = scaled(BASE_CONCEPTS, scale), scaled(BASE_EDGES, scale)
    graph = seed_curriculum(concepts=concepts, edges=edges)
    proposals = seed_proposals(graph, scaled(BASE_PROPOSALS, scale))
    setup_s = time.perf_counter() - started
    measurement_starts()
    with plain_static():
        client, _user = reviewer_client("bench-queue")
        result = _measure(client, rng)
    page_p95 = result["queue_page"]["p95_ms"]
    counts_p95 = max(
        result["queue_counts_after_decisions"]["p95_ms"], result["queue_counts_fresh"]["p95_ms"]
    )
    return {
        "benchmark": "queue",
        "database": connection.vendor,
        "proposals": proposals,
        "concepts": concepts,
        "edges": edges,
        "setup_s": round(setup_s, 1),
        **result,
        "budget": BUDGET,
        "within_budget": page_p95 <= BUDGET["queue_p95_ms"]
        and counts_p95 <= BUDGET["counts_p95_ms"],
    }


def _decide(client, rng: random.Random, n: int) -> dict[str, int]:
    """``n`` decisions through the views, accept and reject in turn, on random open
    proposals; how many the service took and how many it refused (in words)."""
    top = Proposal.objects.filter(status="pending").order_by("-id").values_list("pk", flat=True)
    newest = top.first() or 0
    done = {"taken": 0, "refused": 0}
    for i in range(n):
        pk = (
            Proposal.objects.filter(status="pending", pk__lte=rng.randint(1, newest))
            .order_by("-pk")
            .values_list("pk", "version")
            .first()
        )
        if pk is None:
            continue
        if i % 2:
            url, data = reverse("review:reject", args=[pk[0]]), {"reason_code": "too_vague"}
        else:
            url, data = reverse("review:accept", args=[pk[0]]), {}
        client.post(url, {"version": pk[1], **data}, headers=HX)
        still_open = Proposal.objects.filter(pk=pk[0], status__in=("pending", "held")).exists()
        done["refused" if still_open else "taken"] += 1
    return done


def _page(client, url: str) -> tuple[float, int, float]:
    """One page request: (milliseconds, SQL queries, milliseconds of them in SQL), so a
    figure from a busy machine can be told apart into the database's part and the rest."""
    from django.test.utils import CaptureQueriesContext

    connection.queries_log.clear()
    with CaptureQueriesContext(connection) as ctx:
        started = time.perf_counter()
        client.get(url)
        elapsed = (time.perf_counter() - started) * 1000
    sql_ms = sum(float(q["time"]) for q in ctx.captured_queries) * 1000
    return elapsed, len(ctx.captured_queries), sql_ms


def _measure(client, rng: random.Random) -> dict:
    queue, counts = reverse("review:queue"), reverse("review:queue-counts")
    page_sql: list[float] = []
    page_times: list[float] = []
    page_queries: dict[str, int] = {}
    by_filter: dict[str, list[float]] = {}
    counts_lived: list[float] = []
    counts_by_filter: dict[str, list[float]] = {}
    decided = {"taken": 0, "refused": 0}
    for _round in range(ROUNDS):
        for q in FILTERS:
            name = q or "(default)"
            elapsed, queries, sql_ms = _page(client, queue + "?" + q)
            page_times.append(elapsed)
            page_sql.append(sql_ms)
            page_queries[name] = queries
            by_filter.setdefault(name, []).append(elapsed)
            counted = timed_request(client, "get", counts + "?" + q)[0]
            counts_lived.append(counted)
            counts_by_filter.setdefault(name, []).append(counted)
        for key, n in _decide(client, rng, DECISIONS_PER_ROUND).items():
            decided[key] += n
    counts_fresh: list[float] = []
    for q in FILTERS:
        cache.clear()
        counts_fresh.append(timed_request(client, "get", counts + "?" + q)[0])
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
            "sql_p95_ms": percentiles(page_sql)["p95_ms"],
        },
        "queue_page_200_deep": {"ms": round(deep_ms, 2), "queries": deep_queries},
        "decisions_between_rounds": decided,
        "queue_counts_after_decisions": {
            **percentiles(counts_lived),
            "p95_ms_by_filter": {k: percentiles(v)["p95_ms"] for k, v in counts_by_filter.items()},
        },
        "queue_counts_fresh": percentiles(counts_fresh),
        "focus_card": percentiles(focus_times),
    }
