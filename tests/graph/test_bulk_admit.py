"""Admitting a batch of edges of acyclic relations as a set (``kgreview.graph.bulk_admit``):
the same refusals as admitting them one by one, in a handful of statements when the
edges agree with the order, and every order still holding every edge afterwards."""

from __future__ import annotations

import contextlib
import random
import re

import pytest
from django.db import transaction
from django.utils import timezone

from kgreview.core.errors import CycleDetected, DuplicateEdge
from kgreview.graph import bulk, order
from kgreview.graph import services as graph
from kgreview.graph.models import Edge, RelationType
from kgreview.graph.services.rows import admit_fact

pytestmark = pytest.mark.django_db


def _rows(pairs, key="prerequisite"):
    """Unsaved edge rows for (source, target) concept pairs, with the concepts."""
    rel = RelationType.objects.get(key=key)
    now = timezone.now()
    return [
        (
            graph.edge_row(
                source_id=s.pk,
                target_id=t.pk,
                relation=rel,
                weight=1.0,
                confidence=0.9,
                reason="Stated in the lesson.",
                evidence=None,
                valid_at=now,
                recorded_at=now,
            ),
            s,
            t,
        )
        for s, t in pairs
    ]


def _one_by_one(items) -> list[str | None]:
    """What admitting the rows one at a time says of each (rolled back afterwards)."""
    out: list[str | None] = []
    with transaction.atomic():
        for row, s, t in items:
            try:
                row.in_order = admit_fact(relation=row.relation, source=s, target=t).in_order
            except (DuplicateEdge, CycleDetected) as exc:
                out.append(_said(exc))
                continue
            row.save(force_insert=True)
            out.append(None)
        transaction.set_rollback(True)
    for row, _, _ in items:
        row.pk = None
        row._state.adding = True
    return out


def _said(exc) -> str:
    """A refusal's kind and words up to its chain, edge ids left out (a rolled-back
    insert spends one)."""
    return re.sub(r"#\d+", "#…", f"{type(exc).__name__}: {str(exc).split(':')[0]}")


def _words(refusals) -> list[str | None]:
    return [None if r is None else _said(r) for r in refusals]


def _assert_every_order_holds():
    for rel in RelationType.objects.filter(acyclic=True):
        assert rel.ordered and order.edges_out_of_order(rel.pk) == [], rel.key


def test_a_batch_that_agrees_with_the_order_is_admitted_in_a_few_statements(
    f, django_assert_max_num_queries
):
    """Forty edges running forwards along a chain, ten of them to concepts new to the
    relation: one read, one write of places, one insert; no search, no statement per edge."""
    chain = [f.concept(f"Step {i}") for i in range(30)]
    for a, b in zip(chain, chain[1:], strict=False):
        f.edge(a, b)
    fresh = [f.concept(f"Fresh {i}") for i in range(10)]
    pairs = [(chain[i], chain[i + 5]) for i in range(25)] + [
        (chain[i], chain[i + 2]) for i in range(5)
    ]
    pairs += [(chain[i], fresh[i]) for i in range(10)]
    items = _rows(pairs)
    with django_assert_max_num_queries(4):
        refusals = bulk.edges_add_checked(items)
    assert refusals == [None] * 40
    assert all(row.pk and row.in_order for row, _, _ in items)
    _assert_every_order_holds()


def test_a_cycle_within_the_batch_is_refused_with_its_chain_and_nothing_else_is(f):
    """A → B → C → A among concepts new to the relation: the third edge is refused with
    the chain the batch made, in the words of one by one; the others are written."""
    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    items = _rows([(a, b), (b, c), (c, a)])
    expected = _one_by_one(items)
    refusals = bulk.edges_add_checked(items)
    assert _words(refusals) == expected
    assert refusals[:2] == [None, None] and isinstance(refusals[2], CycleDetected)
    assert str(refusals[2]) == (
        '"Gamma" is a prerequisite for "Alpha" would close a cycle: Alpha → Beta → Gamma → Alpha.'
    )
    assert refusals[2].details["path"] == [a.pk, b.pk, c.pk]
    assert Edge.objects.filter(status="active").count() == 2
    _assert_every_order_holds()


def test_an_edge_against_the_order_is_searched_and_the_order_moves_for_it(f):
    """A → B and C → D stand, the batch adds D → A (against the order: the concepts
    found trade places), then B → C, which now closes B → C → D → A → B through the graph
    and the batch, and is refused."""
    a, b, c, d = (f.concept(n) for n in ("A", "B", "C", "D"))
    f.edge(a, b)
    f.edge(c, d)
    f.edge(f.concept("Before A"), a)  # so A has a way in and D a way out: a real search
    f.edge(d, f.concept("After D"))
    rel = RelationType.objects.get(key="prerequisite")
    items = _rows([(d, a), (b, c), (a, f.concept("New end"))])
    expected = _one_by_one(items)
    refusals = bulk.edges_add_checked(items)
    assert _words(refusals) == expected
    assert refusals[0] is None and refusals[2] is None
    assert isinstance(refusals[1], CycleDetected)
    assert "would close a cycle" in str(refusals[1])
    assert order.edges_out_of_order(rel.pk) == []


def test_the_same_fact_twice_in_a_batch_is_written_once(f):
    """The repeat is refused as already in the graph, naming the row the batch wrote; a
    fact the graph held before is refused the same way."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    old = f.edge(b, c)
    items = _rows([(a, b), (a, b), (b, c)])
    refusals = bulk.edges_add_checked(items)
    assert refusals[0] is None
    assert isinstance(refusals[1], DuplicateEdge) and isinstance(refusals[2], DuplicateEdge)
    assert str(refusals[1]).endswith(f"is already in the graph (edge #{items[0][0].pk}).")
    assert str(refusals[2]).endswith(f"is already in the graph (edge #{old.pk}).")
    assert Edge.objects.filter(source=a, target=b).count() == 1


def test_an_unordered_relation_is_checked_edge_by_edge_with_the_same_refusals(f):
    """No order to lean on: each edge goes through the bounded searches, as one by one."""
    a, b, c = (f.concept() for _ in range(3))
    f.edge(a, b)
    RelationType.objects.filter(key="prerequisite").update(ordered=False)
    items = _rows([(b, c), (c, a), (a, c)])
    expected = _one_by_one(items)
    refusals = bulk.edges_add_checked(items)
    assert _words(refusals) == expected
    assert refusals[0] is None and isinstance(refusals[1], CycleDetected)


@pytest.mark.parametrize("seed", range(6))
def test_a_random_batch_is_refused_exactly_where_one_by_one_refuses(f, seed):
    """On a random graph, a random batch (forwards, backwards, repeats, cycles within it,
    ends new to the relation): the same refusal for each edge as admitting them one by
    one, and every order holds every edge afterwards."""
    rng = random.Random(seed)
    concepts = [f.concept(f"N{seed}-{i}") for i in range(24)]
    for _ in range(30):
        i, j = sorted(rng.sample(range(18), 2))
        with contextlib.suppress(DuplicateEdge):
            f.edge(concepts[i], concepts[j], rng.choice(["prerequisite", "part_of"]))
    pairs = [tuple(rng.sample(concepts, 2)) for _ in range(40)]
    pairs += pairs[:3]  # repeats within the batch
    keys = [rng.choice(["prerequisite", "part_of"]) for _ in pairs]
    items = [
        _rows([pair], key)[0] for pair, key in zip(pairs, keys, strict=True)
    ]  # relations mixed in one batch
    expected = _one_by_one(items)
    refusals = bulk.edges_add_checked(items)
    assert _words(refusals) == expected
    assert any(r is None for r in refusals) and any(r is not None for r in refusals)
    _assert_every_order_holds()
