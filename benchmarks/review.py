"""``manage.py bench review``: decisions and queue pages against a large synthetic queue.

The data is written with bulk inserts (it is set-up, not what is measured): 50,000
concepts, 200,000 active edges (acyclic relations follow a hidden order, as a curriculum
does), 100,000 pending proposals. Then real requests go through the test client, with
sessions, middleware, the view, the service, and the template, and each is timed and its
SQL queries counted.
"""

from __future__ import annotations

import random
import time
import uuid

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse
from django.utils import timezone

from construction import keys
from construction.synthetic import concept_names
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.graph.services import source_import
from kgreview.review import selectors
from kgreview.review.models import Proposal
from kgreview.review.services import endpoint_columns, flags_text

from .common import percentiles, seed_concepts

FLAG_MIX = [(), (), (), ("new_concept",), ("contradiction",), ("below_gate",)]
TEXT = (
    "Before learning vector search you should understand embeddings.\n"
    "Retrieval-augmented generation builds on vector search and embeddings.\n"
)


def _seed_edges(ids: list[int], relations: list[RelationType], n: int, rng) -> None:
    now = timezone.now()
    seen: set[tuple[int, int, int]] = set()
    batch: list[Edge] = []
    count = 0
    while count < n:
        rel = relations[count % len(relations)]
        a, b = rng.sample(range(len(ids)), 2)
        if rel.acyclic or rel.symmetric:
            a, b = min(a, b), max(a, b)
        key = (ids[a], rel.pk, ids[b])
        if key in seen:
            continue
        seen.add(key)
        batch.append(
            Edge(
                source_id=ids[a],
                target_id=ids[b],
                relation=rel,
                is_symmetric=rel.symmetric,
                confidence=round(rng.uniform(0.6, 1.0), 2),
                reason="Seeded for the benchmark.",
                valid_at=now,
                recorded_at=now,
            )
        )
        count += 1
        if len(batch) >= 10_000:
            Edge.objects.bulk_create(batch)
            batch = []
    if batch:
        Edge.objects.bulk_create(batch)


def _edge_proposal(source: dict, target: dict, rel, revision, *, confidence, flags, key):
    """An unsaved pending (or held) add_edge proposal quoting the bench lesson; its key
    columns come from ``endpoint_columns``, as an agent's would."""
    quote = TEXT.splitlines()[0]
    start = revision.text.index(quote)
    payload = {"source": source, "target": target, "relation": rel.key, "weight": 1.0}
    payload["conflicts"] = []
    return Proposal(
        kind="add_edge",
        status="held" if confidence < 0.6 else "pending",
        payload=payload,
        confidence=confidence,
        reason="Seeded for the benchmark.",
        evidence_revision=revision,
        evidence_start=start,
        evidence_end=start + len(quote),
        evidence_quote=quote,
        flags=list(flags),
        flags_text=flags_text(flags),
        dedup_key=key,
        priority=round(confidence * 100) + (100 if "contradiction" in flags else 0),
        document=revision.source,
        **endpoint_columns("add_edge", payload, {rel.key: rel.pk}),
    )


def _concept_end(names, ids, i: int) -> dict:
    return {"name": names[i], "concept_id": ids[i], "match": "exact", "score": 100.0}


def _seed_proposals(ids, names, relations, revision, n: int, rng) -> None:
    batch: list[Proposal] = []
    taken: set[str] = set()
    i = 0
    while len(taken) < n:
        i += 1
        rel = relations[i % len(relations)]
        a, b = rng.sample(range(len(ids)), 2)
        if rel.acyclic:
            a, b = min(a, b), max(a, b)
        # The key an agent's proposal between these two concepts carries.
        key = keys.edge_dedup_key(f"c{ids[a]}", rel.key, f"c{ids[b]}", symmetric=rel.symmetric)
        if key in taken:
            continue
        taken.add(key)
        flags = rng.choice(FLAG_MIX)
        confidence = round(rng.uniform(0.3, 1.0), 2)
        if confidence < 0.6:
            flags = tuple(sorted(set(flags) | {"below_gate"}))
        batch.append(
            _edge_proposal(
                _concept_end(names, ids, a),
                _concept_end(names, ids, b),
                rel,
                revision,
                confidence=confidence,
                flags=flags,
                key=key,
            )
        )
        if len(batch) >= 10_000:
            Proposal.objects.bulk_create(batch)
            batch = []
    if batch:
        Proposal.objects.bulk_create(batch)


def _timed(
    client: Client, method: str, url: str, data=None, headers=None
) -> tuple[float, int, int]:
    connection.queries_log.clear()  # the log is capped at 9,000: start each request at zero
    with CaptureQueriesContext(connection) as ctx:
        t0 = time.perf_counter()
        response = getattr(client, method)(url, data or {}, headers=headers or {})
        elapsed = (time.perf_counter() - t0) * 1000
    return elapsed, len(ctx.captured_queries), response.status_code


def bench_review(
    *,
    proposals: int = 100_000,
    concepts: int = 50_000,
    edges: int = 200_000,
    decisions: int = 300,
    seed: int = 3,
) -> dict:
    rng = random.Random(seed)
    started = time.perf_counter()
    names = concept_names(concepts)
    seed_concepts(names)
    rows = list(Concept.objects.order_by("pk").values_list("pk", "name"))
    ids = [pk for pk, _ in rows]
    names = [name for _, name in rows]
    relations = list(RelationType.objects.filter(active=True).order_by("key"))
    with transaction.atomic():
        _seed_edges(ids, relations, edges, rng)
    revision = source_import(
        slug="bench-lesson", title="Bench", text=TEXT, acting_user=None
    ).revision
    with transaction.atomic():
        _seed_proposals(ids, names, relations, revision, proposals, rng)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE")
    setup_s = time.perf_counter() - started

    # Static URLs without a collected manifest; what is measured is the request itself.
    plain_static = override_settings(
        STORAGES={
            "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        }
    )
    plain_static.enable()
    try:
        return _measure(proposals, concepts, edges, decisions, setup_s)
    finally:
        plain_static.disable()


def _measure(proposals, concepts, edges, decisions, setup_s) -> dict:
    user = get_user_model().objects.create_user("bench-reviewer", password="x-bench-12345")
    user.groups.add(Group.objects.get(name="reviewer"))
    client = Client()
    client.force_login(user)
    hx = {"HX-Request": "true"}

    pending = list(
        Proposal.objects.filter(status="pending")
        .order_by("?")
        .values_list("pk", "version")[: decisions * 3]
    )
    timings: dict[str, list[float]] = {"accept": [], "reject": [], "edit_accept": []}
    query_counts: dict[str, list[int]] = {k: [] for k in timings}
    refused: dict[str, int] = {k: 0 for k in timings}
    for i, (pk, version) in enumerate(pending):
        action = ("accept", "reject", "edit_accept")[i % 3]
        if action == "accept":
            url, data = reverse("review:accept", args=[pk]), {"version": version}
        elif action == "reject":
            url = reverse("review:reject", args=[pk])
            data = {"version": version, "reason_code": "too_vague"}
        else:
            url = reverse("review:edit", args=[pk])
            data = {"version": version, "confidence": "0.7", "weight": "2"}
        elapsed, queries, status = _timed(client, "post", url, data, hx)
        if status != 200:
            refused[action] += 1
        timings[action].append(elapsed)
        query_counts[action].append(queries)

    filters = [
        "",
        "status=held",
        "status=open&flag=contradiction",
        "kind=add_edge&relation=prerequisite",
        "cmin=0.8&cmax=0.95&sort=confidence",
        "status=all&sort=newest",
        "flag=new_concept&relation=related",
        "status=rejected",
    ]
    page_times: list[float] = []
    page_queries: dict[str, int] = {}
    for _round in range(5):
        for q in filters:
            elapsed, queries, _ = _timed(client, "get", reverse("review:queue") + "?" + q)
            page_times.append(elapsed)
            page_queries[q or "(default)"] = queries
    from django.core.cache import cache

    counts_cold: list[float] = []
    counts_warm: list[float] = []
    for q in filters:
        cache.clear()
        counts_cold.append(_timed(client, "get", reverse("review:queue-counts") + "?" + q)[0])
        counts_warm.append(_timed(client, "get", reverse("review:queue-counts") + "?" + q)[0])
    # The keyset: page 200 costs what page 1 costs.
    f = selectors.QueueFilter()
    cursor = None
    for _ in range(200):
        page = selectors.queue_page(f, after=cursor)
        cursor = page.next_cursor
    deep_ms, deep_queries, _ = _timed(client, "get", reverse("review:queue") + f"?after={cursor}")
    focus_times = [
        _timed(client, "get", reverse("review:focus") + "?" + q, headers=hx)[0] for q in filters
    ]

    every = [t for values in timings.values() for t in values]
    every_q = [q for values in query_counts.values() for q in values]
    page_p95 = percentiles(page_times)["p95_ms"]
    return {
        "benchmark": "review",
        "database": connection.vendor,
        "proposals": proposals,
        "concepts": concepts,
        "edges": edges,
        "setup_s": round(setup_s, 1),
        "decision": {
            "all": percentiles(every),
            "max_queries": max(every_q),
            "by_action": {
                k: {**percentiles(v), "max_queries": max(query_counts[k]), "refused": refused[k]}
                for k, v in timings.items()
            },
        },
        "queue_page": {**percentiles(page_times), "queries_by_filter": page_queries},
        "queue_page_200_deep": {"ms": round(deep_ms, 2), "queries": deep_queries},
        "queue_counts_cold": percentiles(counts_cold),
        "queue_counts_cached": percentiles(counts_warm),
        "focus_card": percentiles(focus_times),
        "budget": {"decision_p95_ms": 100, "decision_queries": 15, "queue_p95_ms": 150},
        "within_budget": percentiles(every)["p95_ms"] <= 100
        and max(every_q) <= 15
        and page_p95 <= 150,
    }


# --- Bulk decisions -----------------------------------------------------------------------


def _seed_bulk(ids, names, relations, revision, n: int, rng) -> list[int]:
    """``n`` edge proposals shaped like an agent's: about half need a concept that is only
    proposed (several edges share each), the rest join known concepts."""
    new_names = [f"Bulk topic {i}" for i in range(n // 4)]
    concept_props = Proposal.objects.bulk_create(
        [
            Proposal(
                kind="add_concept",
                status="pending",
                payload={"name": name, "aliases": [], "description": ""},
                confidence=0.9,
                reason="Named in the lesson.",
                flags=["new_concept"],
                flags_text=flags_text(["new_concept"]),
                dedup_key=keys.concept_dedup_key(name),
                document=revision.source,
            )
            for i, name in enumerate(new_names)
        ]
    )
    if concept_props[0].pk is None:
        concept_props = list(Proposal.objects.filter(kind="add_concept").order_by("pk"))
    rows = []
    for i in range(n):
        rel = relations[i % len(relations)]
        a, b = rng.sample(range(len(ids)), 2)
        if rel.acyclic:
            a, b = min(a, b), max(a, b)
        target = _concept_end(names, ids, b)
        if i % 2:
            needed = concept_props[(i // 2) % len(concept_props)]
            target = {"name": needed.payload["name"], "proposal_id": needed.pk, "match": "new"}
        key = f"bulk:{i}:{uuid.uuid4().hex[:8]}"
        rows.append(
            _edge_proposal(
                _concept_end(names, ids, a),
                target,
                rel,
                revision,
                confidence=0.8,
                flags=(),
                key=key,
            )
        )
    created = Proposal.objects.bulk_create(rows)
    if created[0].pk is None:
        return list(
            Proposal.objects.filter(kind="add_edge").order_by("pk").values_list("pk", flat=True)
        )
    return [p.pk for p in created]


def bench_bulk(
    *, proposals: int = 1000, concepts: int = 50_000, edges: int = 200_000, seed: int = 5
) -> dict:
    """Preview then apply one bulk accept of ``proposals`` edge proposals through the view,
    half of them needing concept proposals accepted with them; then undo it."""
    from kgreview.review import undo

    rng = random.Random(seed)
    names = concept_names(concepts)
    seed_concepts(names)
    rows = list(Concept.objects.order_by("pk").values_list("pk", "name"))
    ids = [pk for pk, _ in rows]
    names = [name for _, name in rows]
    relations = list(RelationType.objects.filter(active=True).order_by("key"))
    with transaction.atomic():
        _seed_edges(ids, relations, edges, rng)
    revision = source_import(
        slug="bench-lesson", title="Bench", text=TEXT, acting_user=None
    ).revision
    with transaction.atomic():
        wanted = _seed_bulk(ids, names, relations, revision, proposals, rng)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE")
    plain_static = override_settings(
        STORAGES={
            "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        }
    )
    plain_static.enable()
    try:
        user = get_user_model().objects.create_user("bench-bulk", password="x-bench-12345")
        user.groups.add(Group.objects.get(name="reviewer"))
        client = Client()
        client.force_login(user)
        hx = {"HX-Request": "true"}
        data = {"action": "accept", "id_list": ",".join(map(str, wanted))}
        preview_ms, preview_q, _ = _timed(
            client, "post", reverse("review:bulk"), {**data, "step": "preview"}, hx
        )
        apply_ms, apply_q, _ = _timed(
            client, "post", reverse("review:bulk"), {**data, "step": "apply"}, hx
        )
        accepted = Proposal.objects.filter(pk__in=wanted, status="accepted").count()
        with_them = Proposal.objects.filter(kind="add_concept", status="accepted").count()
        (batch,) = undo.undoable_batches(reviewer=user, limit=1)
        undo_ms, undo_q, _ = _timed(
            client, "post", reverse("review:undo"), {"batch": str(batch.batch), "from": "queue"}, hx
        )
        reopened = Proposal.objects.filter(pk__in=wanted, status="pending").count()
    finally:
        plain_static.disable()
    return {
        "benchmark": "bulk",
        "database": connection.vendor,
        "proposals": proposals,
        "concepts": concepts,
        "edges": edges,
        "preview": {"ms": round(preview_ms, 1), "queries": preview_q},
        "apply": {
            "ms": round(apply_ms, 1),
            "queries": apply_q,
            "accepted": accepted,
            "concepts_accepted_with_them": with_them,
        },
        "undo": {"ms": round(undo_ms, 1), "queries": undo_q, "reopened": reopened},
        "budget": {"preview_ms": 2000, "apply_ms": 2000},
        "within_budget": preview_ms <= 2000 and apply_ms <= 2000,
    }
