"""Concurrent writers on PostgreSQL: locks keep the graph consistent."""

from __future__ import annotations

import pytest

from kgreview.core.errors import CycleDetected, DuplicateEdge
from kgreview.graph import services
from kgreview.graph.models import Edge
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
