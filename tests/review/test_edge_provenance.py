"""An edge's provenance is review's row, written with the decision on every path that
makes or retires an edge: an accept, an update, an invalidation, a merge and its undo,
a bulk accept and its undo. An edge no decision touched has none, and reads as empty."""

from __future__ import annotations

import pytest

from kgreview.graph.models import Edge
from kgreview.review import history, provenance
from kgreview.review.decide import bulk, decisions, mend, undo
from kgreview.review.models import EdgeProvenance
from kgreview.review.services import proposal_create

pytestmark = pytest.mark.django_db


def made(edge: Edge) -> tuple:
    p = provenance.of(Edge.objects.get(pk=edge.pk))
    return p.proposal_id, p.decision_id, p.invalidation_decision_id


def test_a_seeded_edge_has_no_row_and_explains_without_one(f):
    e = f.edge(f.concept("A"), f.concept("B"))
    assert not EdgeProvenance.objects.filter(edge=e).exists()
    assert made(e) == (None, None, None)
    why = history.edge_explain(edge=e)
    assert why["proposal"] is None and why["trail"] == []


def test_an_update_and_its_undo_record_each_row(f, reviewer):
    e = f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    update = proposal_create(
        kind="update_edge",
        payload={"edge_id": e.pk, "relation": "builds_on", "swap_direction": True},
        confidence=0.9,
        reason="Direction was wrong.",
    )
    out = decisions.proposal_accept(proposal_id=update.pk, acting_user=reviewer)
    (new,) = out.edges
    assert made(e) == (None, None, out.decision.pk)
    assert made(new) == (update.pk, out.decision.pk, None)
    (back,) = undo.decisions_undo(acting_user=reviewer, batch=out.batch).undone
    restored = Edge.objects.get(supersedes=new)
    assert made(new) == (update.pk, out.decision.pk, back.pk)
    assert made(restored) == (None, back.pk, None)


def test_an_invalidation_of_a_seeded_edge_and_its_undo(f, reviewer):
    e = f.edge(f.concept("A"), f.concept("B"))
    out = mend.edge_retire_by_hand(acting_user=reviewer, edge_id=e.pk, note="Wrong.")
    assert made(e) == (None, None, out.decision.pk)
    (back,) = undo.decisions_undo(acting_user=reviewer, batch=out.batch).undone
    assert made(Edge.objects.get(supersedes=e)) == (None, back.pk, None)


def test_a_merge_moves_the_edges_with_its_decision_and_its_undo_restores_theirs(f, curator):
    emb, vs, twin = f.concept("Embeddings"), f.concept("Vector search"), f.concept("Embedding")
    p = f.edge_proposal(twin, vs)
    accepted = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    (old,) = accepted.edges
    merge = mend.concepts_merge_by_hand(
        acting_user=curator, survivor_id=emb.pk, loser_id=twin.pk, note=""
    )
    moved = Edge.objects.get(supersedes=old)
    assert moved.source == emb
    assert made(old) == (p.pk, accepted.decision.pk, merge.decision.pk)
    assert made(moved) == (merge.proposal.pk, merge.decision.pk, None)
    (back,) = undo.decisions_undo(acting_user=curator, batch=merge.batch).undone
    restored = Edge.objects.get(supersedes=moved)
    assert restored.source == twin
    assert made(moved) == (merge.proposal.pk, merge.decision.pk, back.pk)
    assert made(restored) == (p.pk, back.pk, None)


def test_a_bulk_accept_and_its_undo_record_every_edge_in_one_statement_each(f, reviewer):
    doc = f.lesson()
    ps = [f.edge_proposal(f.concept(f"S{i}"), f.concept(f"T{i}"), doc=doc) for i in range(3)]
    result = bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=[p.pk for p in ps], action="accept"
    )
    rows = EdgeProvenance.objects.filter(proposal__in=ps).select_related("decision")
    assert sorted(r.proposal_id for r in rows) == [p.pk for p in ps]
    assert all(r.decision.proposal_id == r.proposal_id for r in rows)
    undone = undo.decisions_undo(acting_user=reviewer, batch=result.batch)
    undo_of = {d.undoes_id: d.pk for d in undone.undone}
    for r in EdgeProvenance.objects.filter(proposal__in=ps):
        assert r.invalidation_decision_id == undo_of[r.decision_id]
