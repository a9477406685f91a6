"""``manage.py bench review`` and ``bench bulk``: decisions against a large synthetic queue.

The data is the curriculum-shaped graph (``benchmarks.curriculum``: 50,000 concepts and
200,000 edges at ``--scale 1``, five or ten times that at 5 and 10) with 100,000 open
proposals shaped like it (times the scale), written with bulk inserts (set-up, not what
is measured), then ``ANALYZE``. Real requests go through the test client, with sessions,
middleware, the view, the service and the template, each timed and its SQL queries
counted. The proposals decided are drawn at random from the whole queue.
"""

from __future__ import annotations

import random
import time
import uuid

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.test import Client
from django.urls import reverse

from construction import keys
from kgreview.review.models import Proposal
from kgreview.review.services import flags_text

from .common import percentiles, plain_static, scaled, timed_request
from .curriculum import (
    BASE_CONCEPTS,
    BASE_EDGES,
    BASE_PROPOSALS,
    Curriculum,
    bench_lesson,
    concept_end,
    edge_proposal,
    seed_curriculum,
    seed_proposals,
)


def reviewer_client(username: str) -> tuple[Client, object]:
    """A logged-in reviewer's test client, and the user."""
    user = get_user_model().objects.create_user(username, password="x-bench-12345")
    user.groups.add(Group.objects.get(name="reviewer"))
    client = Client()
    client.force_login(user)
    return client, user


HX = {"HX-Request": "true"}


def bench_review(*, scale: int = 1, decisions: int = 300, seed: int = 3) -> dict:
    """Accept, reject and edit-then-accept ``decisions`` random open proposals."""
    rng = random.Random(seed)
    started = time.perf_counter()
    concepts, edges = scaled(BASE_CONCEPTS, scale), scaled(BASE_EDGES, scale)
    graph = seed_curriculum(rng=rng, concepts=concepts, edges=edges)
    proposals = seed_proposals(graph, scaled(BASE_PROPOSALS, scale), rng)
    setup_s = time.perf_counter() - started
    with plain_static():
        client, _user = reviewer_client("bench-reviewer")
        timings, query_counts, refused = _decide(client, rng, decisions)
    every = [t for values in timings.values() for t in values]
    every_q = [q for values in query_counts.values() for q in values]
    overall = percentiles(every)
    return {
        "benchmark": "review",
        "database": connection.vendor,
        "proposals": proposals,
        "concepts": concepts,
        "edges": edges,
        "setup_s": round(setup_s, 1),
        "decision": {
            "all": overall,
            "max_queries": max(every_q),
            "by_action": {
                k: {**percentiles(v), "max_queries": max(query_counts[k]), "refused": refused[k]}
                for k, v in timings.items()
            },
        },
        "budget": {"decision_p95_ms": 100, "decision_p99_ms": 300, "decision_queries": 15},
        "within_budget": overall["p95_ms"] <= 100
        and overall["p99_ms"] <= 300
        and max(every_q) <= 15,
    }


def _decide(client: Client, rng: random.Random, decisions: int):
    ids = list(Proposal.objects.filter(status="pending").values_list("pk", flat=True))
    picked = rng.sample(ids, min(len(ids), decisions * 3))
    versions = dict(Proposal.objects.filter(pk__in=picked).values_list("pk", "version"))
    timings: dict[str, list[float]] = {"accept": [], "reject": [], "edit_accept": []}
    query_counts: dict[str, list[int]] = {k: [] for k in timings}
    refused: dict[str, int] = {k: 0 for k in timings}
    for i, pk in enumerate(picked):
        action = ("accept", "reject", "edit_accept")[i % 3]
        version = versions[pk]
        if action == "accept":
            url, data = reverse("review:accept", args=[pk]), {"version": version}
        elif action == "reject":
            url = reverse("review:reject", args=[pk])
            data = {"version": version, "reason_code": "too_vague"}
        else:
            url = reverse("review:edit", args=[pk])
            data = {"version": version, "confidence": "0.7", "weight": "2"}
        elapsed, queries, status = timed_request(client, "post", url, data, HX)
        if status != 200:
            refused[action] += 1
        timings[action].append(elapsed)
        query_counts[action].append(queries)
    return timings, query_counts, refused


# --- Bulk decisions -----------------------------------------------------------------------


def _seed_bulk(graph: Curriculum, n: int, rng: random.Random) -> list[int]:
    """``n`` edge proposals shaped like an agent's: about half need a concept that is only
    proposed (several edges share each), the rest join known concepts."""
    revision = bench_lesson()
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
            for name in new_names
        ]
    )
    if concept_props[0].pk is None:
        concept_props = list(Proposal.objects.filter(kind="add_concept").order_by("pk"))
    from .curriculum import LOCAL, local_pair, ordered

    relations = sorted(graph.relations.values(), key=lambda r: r.key)
    rows = []
    n_concepts = len(graph.ids)
    for i in range(n):
        rel = relations[i % len(relations)]
        if rel.key in LOCAL:
            a, b = ordered(rel.key, *local_pair(n_concepts, rng))
        else:
            a, b = rng.sample(range(n_concepts), 2)
        target = concept_end(graph, b)
        if i % 2:
            needed = concept_props[(i // 2) % len(concept_props)]
            target = {"name": needed.payload["name"], "proposal_id": needed.pk, "match": "new"}
        rows.append(
            edge_proposal(
                concept_end(graph, a),
                target,
                rel,
                revision,
                confidence=0.8,
                flags=(),
                key=f"bulk:{i}:{uuid.uuid4().hex[:8]}",
            )
        )
    created = Proposal.objects.bulk_create(rows)
    if created[0].pk is None:
        return list(
            Proposal.objects.filter(kind="add_edge").order_by("pk").values_list("pk", flat=True)
        )
    return [p.pk for p in created]


def bench_bulk(*, scale: int = 1, proposals: int = 1000, seed: int = 5) -> dict:
    """Preview then apply one bulk accept of ``proposals`` edge proposals through the view,
    half of them needing concept proposals accepted with them; then undo it."""
    from kgreview.review import undo

    from .common import analyze

    rng = random.Random(seed)
    concepts, edges = scaled(BASE_CONCEPTS, scale), scaled(BASE_EDGES, scale)
    graph = seed_curriculum(rng=rng, concepts=concepts, edges=edges)
    with transaction.atomic():
        wanted = _seed_bulk(graph, proposals, rng)
    analyze()
    with plain_static():
        client, user = reviewer_client("bench-bulk")
        data = {"action": "accept", "id_list": ",".join(map(str, wanted))}
        bulk = reverse("review:bulk")
        preview_ms, preview_q, _ = timed_request(
            client, "post", bulk, {**data, "step": "preview"}, HX
        )
        apply_ms, apply_q, _ = timed_request(client, "post", bulk, {**data, "step": "apply"}, HX)
        accepted = Proposal.objects.filter(pk__in=wanted, status="accepted").count()
        with_them = Proposal.objects.filter(kind="add_concept", status="accepted").count()
        (batch,) = undo.undoable_batches(reviewer=user, limit=1)
        undo_ms, undo_q, _ = timed_request(
            client, "post", reverse("review:undo"), {"batch": str(batch.batch), "from": "queue"}, HX
        )
        reopened = Proposal.objects.filter(pk__in=wanted, status="pending").count()
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
