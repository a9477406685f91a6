"""Concurrent writers on PostgreSQL: locks keep the graph consistent."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections, transaction

from kgreview.core.errors import CycleDetected, DuplicateEdge
from kgreview.graph import order, services
from kgreview.graph.models import Concept, Edge
from tests.races import race

pytestmark = pytest.mark.usefixtures("reference_data")


def test_two_writers_cannot_close_a_prerequisite_cycle_between_them(on_postgres, f):
    """A→B and B→A inserted at once: the relation lock lets exactly one through."""
    rel = f.relation("prerequisite")

    def add(src, dst):
        return lambda: services.edge_create(
            source=src, target=dst, relation=rel, confidence=0.9, reason="race", acting_user=None
        )

    for _ in range(5):
        a, b = f.concept(), f.concept()

        results = race(add(a, b), add(b, a))
        assert sum(isinstance(r, Edge) for r in results) == 1
        assert sum(isinstance(r, CycleDetected) for r in results) == 1


def test_the_same_edge_added_by_several_writers_lands_once(on_postgres, f):
    """Four writers add one fact: one edge, three clear duplicate errors."""
    a, b = f.concept(), f.concept()
    rel = f.relation("related")

    def add():
        return services.edge_create(
            source=a, target=b, relation=rel, confidence=0.8, reason="r", acting_user=None
        )

    results = race(add, add, add, add)
    assert sum(isinstance(r, Edge) for r in results) == 1
    assert all(isinstance(r, (Edge, DuplicateEdge)) for r in results), results
    assert Edge.objects.filter(status="active").count() == 1


def test_concurrent_merges_of_one_loser_leave_one_winner(on_postgres, f):
    """Merging one concept into two survivors at once: one merge wins, the other is refused."""
    loser, s1, s2 = f.concept("Loser"), f.concept("S1"), f.concept("S2")
    f.edge(loser, f.concept("X"))
    results = race(
        lambda: services.concept_merge(loser=loser, survivor=s1, acting_user=None),
        lambda: services.concept_merge(loser=loser, survivor=s2, acting_user=None),
    )
    wins = [r for r in results if isinstance(r, services.MergeOutcome)]
    assert len(wins) == 1, results
    loser.refresh_from_db()
    assert loser.merged_into == wins[0].survivor
    assert Edge.objects.filter(status="active").count() == 1


def test_an_edge_locks_its_relation_only_after_both_concepts(on_postgres, f):
    """The lock order is concepts, then relation types: while an edge waits for one of its
    concepts, it holds no lock on the relation, so the relation's other writers (who may
    hold that concept) are not stuck behind it."""
    rel = f.relation("prerequisite")
    a, b = f.concept("A"), f.concept("B")
    held = threading.Event()
    release = threading.Event()

    def hold_b():
        with transaction.atomic():
            list(Concept.objects.select_for_update().filter(pk=max(a.pk, b.pk)))
            held.set()
            release.wait(30)
        connections.close_all()

    def add():
        try:
            held.wait(30)
            return services.edge_create(
                source=a, target=b, relation=rel, confidence=0.9, reason="r", acting_user=None
            )
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_b)
    holder.start()
    result: list[object] = []
    writer = threading.Thread(target=lambda: result.append(add()))
    writer.start()
    try:
        assert _waits_for_a_lock(), "the edge never waited for the concept"
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT id FROM graph_relationtype WHERE id = %s FOR NO KEY UPDATE NOWAIT",
                [rel.pk],
            )
            assert cursor.fetchone() == (rel.pk,)
    finally:
        release.set()
        holder.join(30)
        writer.join(30)
    assert isinstance(result[0], Edge)


def _waits_for_a_lock() -> bool:
    """Whether another session of this database waits for a row lock (polled a while)."""
    for _ in range(100):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0]:
                return True
        time.sleep(0.05)
    return False


def test_writers_reordering_one_relation_at_once_keep_its_order(on_postgres, f):
    """Edges that each run against the order, added by several writers at once: the
    relation's row lock takes them one at a time, and the order holds every edge."""
    rel = f.relation("prerequisite")
    late = [f.concept() for _ in range(4)]
    early = [f.concept() for _ in range(4)]
    for i in range(4):
        f.edge(early[i], f.concept())  # the targets lead somewhere: a search, not a move
        f.edge(f.concept(), late[i])  # the sources have something leading in

    def add(src, dst):
        return lambda: services.edge_create(
            source=src, target=dst, relation=rel, confidence=0.9, reason="race", acting_user=None
        )

    results = race(*(add(late[i], early[i]) for i in range(4)))
    assert all(isinstance(r, Edge) for r in results), results
    assert order.edges_out_of_order(rel.pk) == []
